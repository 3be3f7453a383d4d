"""A large snapshot is several zstd frames, read on threads into the bytes it was made of."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.snapshot import frames as snapshot_frames
from assocmem.engine.snapshot.codec import content_hash, dump_state, encode_state, load_state
from assocmem.engine.snapshot.frames import (
    TABLE_MAGIC,
    UNPACKED_MAGIC,
    _cut,
    compress_snapshot,
    decompress_all,
    unpacked_snapshot,
)
from tests.unit.engine.make_events import acceptance_notes, feedback


@pytest.fixture
def small_frames(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(snapshot_frames, "FRAME_BYTES", 100)
    return 100


def test_a_snapshot_larger_than_a_frame_is_cut_and_loads_whole(small_frames: int) -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 0.5, ["a"])])
    raw = encode_state(state)
    blob = dump_state(state)
    assert blob[:4] == TABLE_MAGIC
    (length,) = memoryview(blob[4:8]).cast("I")
    assert length == 8 * math.ceil(len(raw) / small_frames)
    assert content_hash(load_state(blob)) == content_hash(state)
    # Any zstd reader passes over the table and reads the frames one after the other
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob), read_across_frames=True)
    assert reader.read() == raw


@pytest.mark.parametrize("threads", [1, 3])
def test_the_blob_is_the_same_however_many_threads_make_it(
    small_frames: int, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = fold_from_zero(acceptance_notes())
    expected = dump_state(state)
    monkeypatch.setattr(snapshot_frames, "THREADS", threads)
    assert dump_state(state) == expected
    assert content_hash(load_state(expected)) == content_hash(state)


def test_a_snapshot_within_a_frame_is_one_zstd_frame() -> None:
    state = fold_from_zero(acceptance_notes())
    blob = dump_state(state)
    assert zstandard.ZstdDecompressor().decompress(blob) == encode_state(state)


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[:-1],  # the last frame cut short
        lambda blob: blob + b"\0",  # bytes after the last frame
        lambda blob: blob[:4] + b"\x07\0\0\0" + blob[8:],  # a table of 7 bytes
        lambda blob: blob[:4] + b"\0\0\0\0" + blob[8:],  # an empty table
        lambda blob: blob[:8] + b"\x05" + blob[9:],  # the first frame's size wrong
    ],
)
def test_a_damaged_blob_of_frames_is_a_corrupt_snapshot(small_frames: int, damage) -> None:  # type: ignore[no-untyped-def]
    blob = dump_state(fold_from_zero(acceptance_notes()))
    with pytest.raises(CorruptSnapshot):
        load_state(damage(blob))


@given(
    pieces=st.lists(st.binary(max_size=40), max_size=8),
    most=st.integers(1, 50),
)
def test_pieces_are_cut_into_runs_of_the_frame_size_in_order(
    pieces: list[bytes], most: int
) -> None:
    frames = _cut([memoryview(p) for p in pieces], most)
    joined = [b"".join(bytes(p) for p in frame) for frame in frames]
    assert b"".join(joined) == b"".join(pieces)
    assert all(len(frame) == most for frame in joined[:-1])
    assert 0 < len(joined[-1]) <= most or joined == [b""]


@pytest.mark.parametrize("frames", [1, 2])
def test_a_snapshot_kept_unpacked_loads_as_the_compressed_one_does(
    monkeypatch: pytest.MonkeyPatch, frames: int
) -> None:
    """Unpacked (what the rungs on disk keep, mapped), or bytes that cannot be written to
    (copied first: a load's arrays are views that the state may change)."""
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 0.5, ["a"])])
    monkeypatch.setattr(snapshot_frames, "FRAME_BYTES", len(encode_state(state)) // frames + 1)
    blob = dump_state(state)
    assert (blob[:4] == TABLE_MAGIC) == (frames > 1)
    unpacked = b"".join(unpacked_snapshot(blob))
    assert unpacked == UNPACKED_MAGIC + encode_state(state)
    assert content_hash(load_state(unpacked)) == content_hash(state)
    writable = memoryview(bytearray(unpacked))
    raw = snapshot_frames.decompress_snapshot(writable)
    assert raw.flags.writeable and raw.ctypes.data == _address(writable) + len(UNPACKED_MAGIC)
    assert b"".join(unpacked_snapshot(unpacked)) == unpacked
    with pytest.raises(CorruptSnapshot):
        b"".join(unpacked_snapshot(b"not a snapshot"))


def _address(buffer: memoryview) -> int:
    return int(np.frombuffer(buffer, dtype=np.uint8).ctypes.data)


def test_pieces_decompressed_together_are_their_bytes_and_a_broken_one_is_corrupt() -> None:
    parts = [b"first part " * 1000, b"second" * 7, b"third " * 100]
    blobs = [compress_snapshot([memoryview(p)]) for p in parts]
    assert decompress_all(blobs).tobytes() == b"".join(parts)
    assert decompress_all([]).tobytes() == b""
    with pytest.raises(CorruptSnapshot):
        decompress_all([blobs[0], b"not zstd"])
    with pytest.raises(CorruptSnapshot):
        decompress_all([TABLE_MAGIC + b"\x08"])  # a table of frames cut short
