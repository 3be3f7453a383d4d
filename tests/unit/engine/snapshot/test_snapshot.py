from __future__ import annotations

import hashlib
import struct
import zlib

import orjson
import pytest
import zstandard

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.position import Position, Positions
from assocmem.engine.snapshot.codec import content_hash, dump_state, encode_state, load_state
from tests.unit.engine.make_events import acceptance_notes, feedback


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


def test_the_hash_and_the_snapshot_are_of_the_state_bytes_made_piece_by_piece() -> None:
    """Both are made from the pieces of `encode_state` without joining them: the content
    hash is still the SHA-256 of those bytes, and a snapshot decompresses to them."""
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 0.5, ["a"])])
    raw = encode_state(state)
    assert content_hash(state) == hashlib.sha256(raw).hexdigest()
    blob = dump_state(state)
    assert zstandard.frame_content_size(blob) == len(raw)
    assert zstandard.ZstdDecompressor().decompress(blob) == raw


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


def test_link_events_are_kept_as_numbers_and_read_back_as_positions() -> None:
    positions = Positions()
    positions.append(Position(5, 1))
    positions.append(Position(2**64 - 1, 0))
    assert list(positions) == [Position(5, 1), Position(2**64 - 1, 0)]
    assert Positions(positions.flat()) == positions
    assert positions.flat(1) == [2**64 - 1, 0]
    positions.truncate(1)
    assert list(positions) == [Position(5, 1)]


@pytest.mark.parametrize("flat", [[1], [1, -2], ["1", "2"], [1.5, 2]])
def test_link_events_that_are_not_pairs_of_numbers_are_refused(flat: list[object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        Positions(flat)  # type: ignore[arg-type]


def test_a_snapshot_whose_link_events_are_not_positions_is_corrupt() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(99, ["1-0"], 1.0, ["timeout"])])
    raw = encode_state(state)
    (size,) = struct.unpack_from("<Q", raw, 0)
    header = orjson.loads(raw[8 : 8 + size])
    assert header["link_events"] == [99, 0]
    header["link_events"] = [99, -1]
    edited = orjson.dumps(header)
    blob = zstandard.ZstdCompressor().compress(
        struct.pack("<Q", len(edited)) + edited + raw[8 + size :]
    )
    with pytest.raises(CorruptSnapshot, match="out of range"):
        load_state(blob)


def test_taught_links_come_back_with_their_weights_and_positions_both_ways() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 0.5, ["a"])])
    i, j = state.concept_index["a"], state.concept_index["b"]
    state.set_learned(i, j, -0.25, Position(2**64 - 1, 2**64 - 1))
    loaded = load_state(dump_state(state))
    assert loaded.learned == state.learned and loaded.learned[j][i] == -0.25
    assert loaded.learned_at == state.learned_at
    assert loaded.learned_at[(min(i, j), max(i, j))] == Position(2**64 - 1, 2**64 - 1)
    assert content_hash(loaded) == content_hash(state)


def test_a_state_that_was_never_taught_loads_with_no_taught_links() -> None:
    loaded = load_state(dump_state(fold_from_zero(acceptance_notes())))
    assert loaded.learned == {} and loaded.learned_at == {}
