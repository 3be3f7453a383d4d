"""Log entries folded as the workers read them (chunks of stored bytes, `fold_entries`):
the same state and rejections as their events decoded first and folded, broken entries
among them, whatever the chunks and wherever the state had got to."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.event import encode_event
from assocmem.engine.fold import fold
from assocmem.engine.position import ZERO
from assocmem.engine.snapshot import content_hash
from assocmem.engine.state import State
from assocmem.workers import rebuild
from assocmem.workers.rebuild import SEALED_BY_FOLDS, decode_entries, fold_entries

from .engine.test_fold_properties import histories

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

    # Folded chunk by chunk, the rows are sealed into columns as they go: every few rows here
    sealed_rows = data.draw(st.sampled_from([SEALED_BY_FOLDS, 2]))
    state = State()
    with mock.patch.object(rebuild, "SEALED_BY_FOLDS", sealed_rows):
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
