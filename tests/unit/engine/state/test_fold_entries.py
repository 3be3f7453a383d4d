"""Log entries folded as the workers read them (chunks of stored bytes, `fold_entries`):
the same state and rejections as their events decoded first and folded, broken entries
among them, whatever the chunks and wherever the state had got to."""

from __future__ import annotations

import dataclasses
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.envelope import Event, encode_event
from assocmem.engine.events.fold import STAGED_AT_MOST, fold, fold_from_zero
from assocmem.engine.position import ZERO
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.engine.state import state as state_module
from assocmem.engine.state.state import JOINED_ROWS_AT_MOST, State
from assocmem.workers.state import rebuild
from assocmem.workers.state.rebuild import decode_entries, fold_entries
from tests.unit.engine.make_events import written
from tests.unit.engine.state.test_fold_properties import assert_same_index, histories

BROKEN = [
    b"{not json",
    b"[1, 2]",
    b'{"v": 1, "type": "memory.written"}',
    b'{"v": 2, "type": "memory.written", "tenant": "t", "agent": "a", "ts": 5.0,'
    b' "data": {"text": "x", "concepts": ["a", "a"], "importance": 3}}',
]
"""Not JSON, not an object, no envelope, and a payload its check rejects."""


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_chunks_of_stored_entries_fold_as_their_events_decoded_first(events, data) -> None:  # type: ignore[no-untyped-def]
    if data.draw(st.booleans()):  # their notes are folded as columns, but where they supersede
        events = [as_our_writers_write(e) for e in events]
    entries = [(e.position, encode_event(e)) for e in events]
    for at in data.draw(st.lists(st.integers(0, len(entries) - 1), max_size=3, unique=True)):
        entries[at] = (entries[at][0], data.draw(st.sampled_from(BROKEN)))
    folded_before = data.draw(st.integers(0, len(entries)))
    cuts = sorted(data.draw(st.lists(st.integers(1, len(entries)), max_size=4, unique=True)))
    chunks = [
        entries[start:end]
        for start, end in zip([0, *cuts], [*cuts, len(entries)], strict=True)
        if start < end
    ]
    skipped = data.draw(st.sampled_from([frozenset(), frozenset({"feedback.given"})]))

    # Folded chunk by chunk, checked notes are staged as columns, indexed every few notes,
    # in blocks joined up to a few rows
    staged_at_most = data.draw(st.sampled_from([STAGED_AT_MOST, 3]))
    joined_at_most = data.draw(st.sampled_from([JOINED_ROWS_AT_MOST, 4]))
    state = State()
    with (
        mock.patch.object(rebuild, "STAGED_AT_MOST", staged_at_most),
        mock.patch.object(state_module, "JOINED_ROWS_AT_MOST", joined_at_most),
    ):
        fold_entries(state, [entries[:folded_before]] if folded_before else [], skipped)
        rejections = fold_entries(state, chunks, skipped)

    decoded, bad = decode_entries(entries, skipped)
    start = entries[folded_before - 1][0] if folded_before else ZERO
    expected = State()
    fold(expected, [e for e in decoded if e.position <= start])
    later = fold(expected, [e for e in decoded if e.position > start])
    expected_rejections = sorted(
        [r for r in bad if r.position > start] + later, key=lambda r: r.position
    )
    assert state.position == entries[-1][0]  # past the broken entries too
    expected.position = state.position
    assert content_hash(state) == content_hash(expected)
    assert rejections == expected_rejections
    assert [dataclasses.asdict(m) for m in state.rows] == [
        dataclasses.asdict(m) for m in expected.rows
    ]
    assert_same_index(state, expected)
    assert dump_state(state) == dump_state(expected)
    assert all(len(block) <= max(joined_at_most, STAGED_AT_MOST) for block in state.rows.blocks())


def as_our_writers_write(event: Event) -> Event:
    """A note with every field its type's `build` writes (the tests' helpers leave some
    out), which the checked decoder reads as columns (engine/events/checked_note.py)."""
    if event.type not in ("memory.written", "activity.logged"):
        return event
    data = {"tiers": None, "labels": {}, "extractor": "test", **event.data}
    return dataclasses.replace(event, data=data)


def test_notes_folded_a_few_at_a_time_are_kept_in_a_few_blocks() -> None:
    """A worker folds the few notes new since its last fold, again and again: their rows
    are joined into blocks eight at a time, not kept as a block per fold (a read looks
    through every block)."""
    events = [as_our_writers_write(written(n, ["alpha", f"c{n % 7}"])) for n in range(1, 301)]
    entries = [(e.position, encode_event(e)) for e in events]
    state = State()
    for entry in entries:
        fold_entries(state, [[entry]])
    assert len(state.rows) == 300
    assert len(state.rows.blocks()) <= 13  # 300 is 454 in base 8 (JOINED_AT_ONCE)
    assert [m.id for m in state.rows] == [str(e.position) for e in events]
    expected = fold_from_zero(events)
    assert content_hash(state) == content_hash(expected)
    assert_same_index(state, expected)
