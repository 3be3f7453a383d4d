"""Runs of notes folded as blocks of columns give the state a fold of one note at a time gives."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine import fold as fold_module
from assocmem.engine.event import Event
from assocmem.engine.fold import fold
from assocmem.engine.snapshot import content_hash
from assocmem.engine.state import State

from .events import written
from .test_fold_properties import assert_same_index, histories

BROKEN = [
    {"text": "   "},
    {"concepts": ["two words"]},
    {"concepts": ["a", "a"]},
    {"importance": 9},
    {"labels": {"nowhere": "x"}},
    {"tiers": [3, 1]},
]
"""Payload changes the fold rejects: a run holding such notes folds the others."""


@st.composite
def histories_with_broken_notes(draw: st.DrawFn) -> list[Event]:
    events = draw(histories())
    for at in draw(st.lists(st.integers(0, len(events) - 1), max_size=3)):
        if events[at].type == "memory.written":
            data = {**events[at].data, **draw(st.sampled_from(BROKEN))}
            events[at] = dataclasses.replace(events[at], data=data)
    return events


def observed(state: State) -> tuple[object, ...]:
    return (
        content_hash(state),
        [dataclasses.asdict(m) for m in state.rows],
        state.activity_rows,
        state.scoped_rows,
        list(state.memories),
        list(state.link_events),
        state.position,
    )


@given(histories_with_broken_notes(), st.integers(1, 3), st.data())
@settings(max_examples=150, deadline=None)
def test_runs_of_notes_as_columns_fold_as_one_note_at_a_time(
    events: list[Event], run: int, data: st.DataObject
) -> None:
    """Every cut folds on from where the last left, as a worker and a rebuild do."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=3)))
    parts = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
    one_at_a_time, as_columns = State(), State()
    rejected, rejected_in_runs = [], []
    kept = fold_module.COLUMNAR_RUN
    fold_module.COLUMNAR_RUN = run
    try:
        for part in parts:
            rejected += fold(one_at_a_time, part)
            rejected_in_runs += fold(as_columns, part, columnar=True)
    finally:
        fold_module.COLUMNAR_RUN = kept
    assert rejected_in_runs == rejected
    assert observed(as_columns) == observed(one_at_a_time)
    assert_same_index(as_columns, one_at_a_time)
    assert as_columns.relabelled == one_at_a_time.relabelled
    # What later events change of a note in a block: by id, as objects made from columns
    for memory_id in list(one_at_a_time.memories)[:3]:
        assert as_columns.memories[memory_id] == one_at_a_time.memories[memory_id]


def test_a_long_run_is_kept_as_columns_and_read_back_as_its_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fold_module, "COLUMNAR_RUN", 4)
    notes = [written(n, ["alpha", f"c{n % 3}", "beta"]) for n in range(1, 11)]
    state = State()
    fold(state, notes, columnar=True)
    assert state.rows.loaded_end() == 10  # one block, no object made
    assert [state.rows.made(row) for row in range(10)] == [None] * 10
    assert state.memories["7-0"].text == "alpha c1 beta note 7"
    assert state.memories["7-0"].concepts == ("alpha", "c1", "beta")
    assert state.counts.count(state.concept_index["alpha"], state.concept_index["beta"]) == 10


def test_a_run_whose_text_utf8_cannot_hold_is_folded_one_note_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fold_module, "COLUMNAR_RUN", 2)
    notes = [written(1, ["a", "b"]), written(2, ["a", "b"], text="lone \ud800 surrogate")]
    state = State()
    assert fold(state, notes, columnar=True) == []
    assert state.rows.loaded_end() == 0
    assert state.memories["2-0"].text == "lone \ud800 surrogate"
