from __future__ import annotations

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import acceptance_notes, feedback, written


def link(state: State, a: str, b: str):
    return state.link(state.concept_index[a], state.concept_index[b])


def test_memory_written_counts_every_pair_of_its_concepts() -> None:
    state = fold_from_zero(acceptance_notes())
    assert link(state, "a", "b").count == 2
    assert link(state, "b", "c").count == 1
    assert state.position == Position(6, 0)
    assert state.memories_with("a") == ["1-0", "2-0", "5-0"]


def test_feedback_moves_learned_delta_apart_from_counts() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 1.0, ["a"])])
    ab, ac = link(state, "a", "b"), link(state, "a", "c")
    assert (ab.count, ab.learned, ab.weight) == (2, 1.0, 3.0)
    assert (ac.count, ac.learned, ac.weight) == (0, 1.0, 1.0)
    assert ac.changed_at == Position(7, 0)
    assert state.memories["3-0"].valence == 0.5


def test_negative_feedback_never_takes_a_link_below_zero() -> None:
    events = [*acceptance_notes(), *(feedback(7 + i, ["3-0"], -1.0, ["a"]) for i in range(5))]
    state = fold_from_zero(events)
    assert link(state, "a", "b").weight == 0.0
    assert link(state, "a", "b").learned == -2.0
    assert link(state, "a", "c").weight == 0.0


def test_event_at_or_before_the_position_is_skipped() -> None:
    events = acceptance_notes()
    state = fold_from_zero(events)
    before = content_hash(state)
    assert fold(state, events[2:]) == []
    assert content_hash(state) == before


def test_bad_event_is_rejected_and_the_fold_goes_on() -> None:
    bad = Event(
        "memory.written",
        "t",
        "agent",
        1.0,
        {"text": "", "concepts": [], "importance": 3},
        position=Position(1, 0),
    )
    unknown = Event("no.such", "t", "agent", 2.0, {}, v=1, position=Position(2, 0))
    state = State()
    rejections = fold(state, [bad, unknown, written(3, ["x", "y"])])
    assert [str(r.position) for r in rejections] == ["1-0", "2-0"]
    assert "text" in rejections[0].reason
    assert state.position == Position(3, 0) and list(state.memories) == ["3-0"]


def test_feedback_on_unknown_memory_moves_nothing() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["99-0"], 1.0, ["a"])])
    assert link(state, "a", "b").learned == 0.0


def test_long_memories_link_concepts_within_a_window_not_all_pairs() -> None:
    concepts = [f"c{i}" for i in range(20)]
    state = fold_from_zero([written(1, concepts)])
    assert link(state, "c0", "c7").count == 1
    assert link(state, "c0", "c8").count == 0
    assert link(state, "c12", "c19").count == 1
    assert state.written_links() == sum(min(7, 19 - i) for i in range(20))
