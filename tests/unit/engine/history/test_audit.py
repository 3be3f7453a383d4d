"""The history of a link and of a memory, read off the fold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.consolidation import Rule
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.events.record import EventType
from assocmem.engine.events.registry import register, unregister
from assocmem.engine.history.audit import (
    link_filter,
    link_history,
    may_rate,
    memory_filter,
    memory_history,
    rated_memories,
)
from assocmem.engine.history.link_index import link_index, rated_positions
from assocmem.engine.position import Position
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import (
    acceptance_notes,
    accessed,
    consolidated,
    document,
    feedback,
    importance_set,
    written,
)
from tests.unit.engine.state.test_fold_properties import histories


def test_a_link_lists_the_writes_and_the_ratings_that_moved_it_with_the_weight_after() -> None:
    events = [
        *acceptance_notes(),
        feedback(7, ["3-0"], 1.0, ["a"]),
        feedback(8, ["3-0"], -1.0, ["a"]),
    ]
    history = link_history(events, "a", "b")
    rows = [
        (str(c.position), c.type, c.written, c.taught, c.count, c.learned, c.weight)
        for c in history.changes
    ]
    assert rows == [
        ("1-0", "memory.written", 1, 0.0, 1, 0.0, 1.0),
        ("2-0", "memory.written", 1, 0.0, 2, 0.0, 2.0),
        ("7-0", "feedback.given", 0, 1.0, 2, 1.0, 3.0),
        ("8-0", "feedback.given", 0, -1.0, 2, 0.0, 2.0),
    ]
    state = fold_from_zero(events)
    last = history.changes[-1]
    link = state.link(state.concept_index["a"], state.concept_index["b"])
    assert (last.count, last.learned, last.weight) == (link.count, link.learned, link.weight)
    assert history.written_share == 1.0


def test_a_taught_only_link_is_all_taught() -> None:
    history = link_history([*acceptance_notes(), feedback(7, ["3-0"], 1.0, ["a"])], "a", "c")
    assert [(c.written, c.taught) for c in history.changes] == [(0, 1.0)]
    assert history.written_share == 0.0


def test_a_memory_lists_its_write_accesses_ratings_and_importance() -> None:
    events = [
        *acceptance_notes(),
        accessed(7, ["3-0", "1-0"]),
        feedback(8, ["3-0"], 1.0, ["a"]),
        importance_set(9, "3-0", 5),
    ]
    history = memory_history(events, "3-0")
    assert [(str(e.position), e.type) for e in history] == [
        ("3-0", "memory.written"),
        ("7-0", "memory.accessed"),
        ("8-0", "feedback.given"),
        ("9-0", "memory.importance_set"),
    ]
    assert history[1].detail == {"hits": 1} and history[3].detail == {"importance": 5}


def test_a_superseding_note_appears_in_the_history_of_the_one_it_replaces() -> None:
    old, new = written(1, ["wifi"]), written(2, ["wifi"])
    new.data["supersedes"] = ["1-0"]
    assert [e.detail for e in memory_history([old, new], "1-0")][1] == {"superseded_by": "2-0"}


@given(histories(), st.sampled_from(["a", "b", "c"]), st.sampled_from(["d", "e", "f"]))
@settings(max_examples=80, deadline=None)
def test_a_link_s_history_is_every_event_after_which_the_folded_link_differs(
    events: list[Event], source: str, target: str
) -> None:
    state, moved, last = State(), [], (0, 0.0)
    for event in events:  # the reference: fold one event at a time, look at the link
        fold(state, [event])
        i, j = state.concept_index.get(source), state.concept_index.get(target)
        link = state.link(i, j) if i is not None and j is not None else None
        now = (link.count, link.learned) if link else (0, 0.0)
        if now != last:
            moved.append((str(event.position), *now))
            last = now
    history = link_history(events, source, target, rated_memories(events, source, target))
    assert [(str(c.position), c.count, c.learned) for c in history.changes] == moved
    assert history.labels == (state.label(source), state.label(target))
    assert link_history(events, source, target) == history  # every note folded


@given(histories(), st.sampled_from(["a", "b", "c"]), st.sampled_from(["d", "e", "f"]))
@settings(max_examples=80, deadline=None)
def test_the_entries_a_link_audit_leaves_undecoded_change_nothing_in_its_history(
    events: list[Event], source: str, target: str
) -> None:
    entries = [(e.position, encode_event(e)) for e in events]
    keep = link_filter(source, target)
    kept = [decode_event(raw, position) for position, raw in entries if keep(position, raw)]
    assert len(kept) < len(events) or all(keep(p, raw) for p, raw in entries)
    assert link_history(kept, source, target) == link_history(events, source, target)


def test_a_link_taught_through_a_memory_naming_only_one_concept_keeps_that_memory() -> None:
    events = [written(1, ["jitter", "backoff"]), feedback(2, ["1-0"], 1.0, ["deploy"])]
    keep = link_filter("deploy", "jitter")
    kept = [
        decode_event(raw, e.position) for e in events if keep(e.position, raw := encode_event(e))
    ]
    history = link_history(kept, "deploy", "jitter")
    assert [(str(c.position), c.taught) for c in history.changes] == [("2-0", 1.0)]


def test_a_memory_audit_reads_every_consolidation_after_its_write_and_none_before() -> None:
    """A consolidation names no memory it does not merge, but it may decay the links
    ratings taught one (engine/events/consolidation.py): the audit's filter keeps it."""
    events = acceptance_notes()
    night = consolidated(7, fold_from_zero(events), Rule(10.0))
    keep = memory_filter("3-0")
    assert keep(night.position, encode_event(night))
    assert not keep(Position(8, 0), encode_event(accessed(8, ["1-0"])))
    assert [e.type for e in memory_history([*events, night], "3-0")][-1] == "links.consolidated"
    assert memory_history([night, *events], "3-0")[0].type == "memory.written"
    assert memory_history([*events, night], "9-0") == []  # never written: unknown


def test_a_memory_naming_one_concept_is_folded_only_when_a_rating_of_the_link_needs_it() -> None:
    events = [
        written(1, ["b", "d"]),  # rated below for a question naming "a": teaches a -- d
        written(2, ["d", "x"]),  # never rated: changes nothing
        feedback(3, ["1-0"], 1.0, ["a"]),
        written(4, ["a", "d"]),
    ]
    rated = rated_memories(events, "a", "d")
    assert rated == {"1-0"}
    history = link_history(events, "a", "d", rated)
    assert [(str(c.position), c.count, c.learned) for c in history.changes] == [
        ("3-0", 0, 1.0),
        ("4-0", 1, 1.0),
    ]
    assert history == link_history(events, "a", "d")


def test_an_event_type_the_audit_does_not_know_makes_it_fold_every_note() -> None:
    kind = EventType("links.renamed", 1, lambda data: None, lambda s, e: None, lambda: {})
    register(kind)
    try:
        renamed = Event(kind.name, "t", "agent", 2.0, {}, position=Position(2, 0))
        assert rated_memories([written(1, ["a", "d"]), renamed], "a", "d") is None
    finally:
        unregister(kind.name)


def test_only_entries_that_are_not_notes_are_decoded_to_find_the_rated_memories() -> None:
    assert not may_rate(encode_event(written(1, ["a", "d"])))
    assert may_rate(encode_event(feedback(2, ["1-0"], 1.0, ["a"])))
    assert may_rate(b'{"type":"memory.written","v":2}')  # another encoder's key order


def test_entries_naming_neither_concept_are_left_undecoded_unless_they_are_unusual() -> None:
    keep = link_filter("deploy", "jitter")
    at = Position(9, 0)
    naming = encode_event(written(1, ["deploy", "fix"]))
    other = encode_event(written(2, ["fix", "bug"]))
    assert keep(at, naming) and not keep(at, other)
    wordy = encode_event(written(4, ["fix"], "redeploy after the jitter fix"))
    assert not keep(at, wordy)  # its text holds both words; its concepts name neither
    assert not keep(at, encode_event(accessed(3, ["1-0"])))
    escaped = other.replace(b'"fix"', b'"\\u0066ix"')
    assert keep(at, escaped)  # JSON with an escape: the fold decides
    assert keep(at, b'{"type":"memory.written","v":2}')  # another encoder's key order
    assert link_filter('say "hi"', "jitter")(at, other)  # a concept JSON writes escaped


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_the_entries_a_memory_audit_leaves_undecoded_change_nothing_in_its_history(
    events: list[Event], data: st.DataObject
) -> None:
    memory_id = data.draw(st.sampled_from([str(e.position) for e in events]))
    keep = memory_filter(memory_id)
    kept = [e for e in events if keep(e.position, encode_event(e))]
    assert memory_history(kept, memory_id) == memory_history(events, memory_id)


@given(
    histories(),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["d", "e", "f"]),
    st.integers(0, 40),
)
@settings(max_examples=120, deadline=None)
def test_a_link_s_history_from_a_state_s_index_and_the_log_after_it_is_the_whole_log_s(
    events: list[Event], source: str, target: str, split: int
) -> None:
    earlier, later = events[:split], events[split:]
    index = link_index(fold_from_zero(earlier), source, target)
    by_position = {e.position: e for e in earlier}
    named = [by_position[p] for p in index.positions]
    rated = rated_memories(named + later, source, target)
    assert rated is not None  # every type here is known to the audit
    fetched = named + [by_position[p] for p in rated_positions(index, rated)]
    chosen = sorted(fetched, key=lambda e: e.position) + later  # type: ignore[arg-type,return-value]
    assert link_history(chosen, source, target, rated, since=index) == link_history(
        events, source, target
    )


def test_the_fold_indexes_ratings_consolidations_and_documents_not_notes_or_reads() -> None:
    events = [
        written(1, ["a", "d"]),
        feedback(2, ["1-0"], 1.0, ["a"]),
        accessed(3, ["1-0"]),
        importance_set(4, "1-0", 5),
        document(5, [["a", "d"]]),
    ]
    state = fold_from_zero(events)
    assert list(state.link_events) == [Position(2, 0), Position(5, 0)]
    index = link_index(state, "a", "d")
    assert index.positions == (Position(1, 0), Position(2, 0), Position(5, 0))
    assert link_index(state, "a", "x").positions == (Position(2, 0), Position(5, 0))
