"""The history of a link and of a memory, read off the fold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.audit import link_history, memory_history
from assocmem.engine.event import Event
from assocmem.engine.fold import fold, fold_from_zero
from assocmem.engine.state import State

from .events import acceptance_notes, accessed, feedback, importance_set, written
from .test_fold_properties import histories


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
    history = link_history(events, source, target)
    assert [(str(c.position), c.count, c.learned) for c in history.changes] == moved
