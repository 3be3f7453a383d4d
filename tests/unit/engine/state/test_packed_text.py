"""Texts kept compressed, decompressed a frame at a time (engine/state/packed_text.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.snapshot.frames import compress_snapshot, frames_of
from assocmem.engine.state.packed_text import PackedText


def packed(chunks: list[bytes], skip: int, length: int, frame_bytes: int = 7) -> PackedText:
    """`chunks` each compressed apart in frames of `frame_bytes`, as the rungs append them."""
    frames = [
        frame
        for chunk in chunks
        for frame in frames_of(compress_snapshot([memoryview(chunk)], frame_bytes))
    ]
    return PackedText(frames, skip, length)


@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=5),
    data=st.data(),
)
def test_a_slice_is_the_bytes_it_stands_for(chunks: list[bytes], data: st.DataObject) -> None:
    whole = b"".join(chunks)
    skip = data.draw(st.integers(0, len(whole)))
    length = data.draw(st.integers(0, len(whole) - skip))
    text = packed(chunks, skip, length)
    assert len(text) == length
    assert bytes(text) == whole[skip : skip + length]
    start = data.draw(st.integers(0, length))
    stop = data.draw(st.integers(start, length))
    assert text[start:stop] == whole[skip + start : skip + stop]


def test_a_slice_decompresses_the_frames_it_spans_and_no_other() -> None:
    text = packed([b"a" * 70], 0, 70, frame_bytes=10)  # seven frames
    assert text[12:25] == b"a" * 13
    assert sorted(text._cached) == [1, 2]


def test_frames_that_hold_less_than_the_text_named_are_refused() -> None:
    with pytest.raises(CorruptSnapshot):
        packed([b"abc"], 1, 3)
