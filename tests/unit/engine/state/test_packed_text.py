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


def test_a_slice_decompresses_the_frames_it_spans_and_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = packed([bytes(range(70))], 0, 70, frame_bytes=10)  # seven frames
    decompressed: list[int] = []
    whole = text._decompressed
    monkeypatch.setattr(text, "_decompressed", lambda k: decompressed.append(k) or whole(k))
    assert text[12:25] == bytes(range(12, 25))
    assert text[13:17] == bytes(range(13, 17))
    assert text[14:15] == bytes([14])  # kept from the slice before
    assert decompressed == [1, 2, 1]


def test_frames_that_hold_less_than_the_text_named_are_refused() -> None:
    with pytest.raises(CorruptSnapshot):
        packed([b"abc"], 1, 3)
