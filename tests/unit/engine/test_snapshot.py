from __future__ import annotations

import zlib

import pytest
import zstandard

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.fold import fold_from_zero
from assocmem.engine.snapshot import content_hash, dump_state, encode_state, load_state

from .events import acceptance_notes, feedback


def test_round_trip_keeps_links_memories_and_position() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 0.5, ["a"])])
    loaded = load_state(dump_state(state))
    assert content_hash(loaded) == content_hash(state)
    assert str(loaded.position) == "7-0"
    assert loaded.memories["3-0"].valence == state.memories["3-0"].valence


def test_same_events_give_the_same_bytes() -> None:
    assert dump_state(fold_from_zero(acceptance_notes())) == dump_state(
        fold_from_zero(acceptance_notes())
    )


def test_corrupt_bytes_raise_corrupt_snapshot() -> None:
    with pytest.raises(CorruptSnapshot):
        load_state(b"garbage")


def test_a_zstd_frame_that_does_not_say_its_size_loads() -> None:
    """Ours say it (the buffer is made of that size); another writer's may not."""
    state = fold_from_zero(acceptance_notes())
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(encode_state(state))
    assert zstandard.frame_content_size(unsized) == -1
    assert content_hash(load_state(unsized)) == content_hash(state)


def test_a_snapshot_compressed_with_zlib_before_zstd_still_loads() -> None:
    state = fold_from_zero(acceptance_notes())
    old = zlib.compress(encode_state(state), 1)
    assert dump_state(state)[:4] == b"\x28\xb5\x2f\xfd"  # zstd now
    assert content_hash(load_state(old)) == content_hash(state)
