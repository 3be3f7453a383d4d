"""Memories' texts kept as the zstd frames they are stored in, one after the other: a slice
decompresses the frames it spans, not the rest (workers/store/rung_rows.py hands a state
loaded from a rung its texts so).

A read looks at the texts of the few memories it returns, but a state holds every
memory's: decompressing all of them into fresh memory (hundreds of MB at a million
memories) was the largest part of an `as_of` read far into a long log.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import zstandard

from assocmem.engine.errors import CorruptSnapshot

CACHED_BYTES = 32 << 20
"""Decompressed frames kept for the next slices (a consolidation walks every text in order,
a read a few near one another)."""


class PackedText:
    """`length` bytes of text, from byte `skip` of `frames` decompressed one after the other.
    Sliced like the bytes it stands for (a slice is bytes, or a bytearray when it spans
    frames); `bytes()` of it is all of them."""

    def __init__(self, frames: Sequence[memoryview], skip: int, length: int) -> None:
        sizes = [zstandard.frame_content_size(frame) for frame in frames]
        if sizes and min(sizes) < 0:
            raise CorruptSnapshot("a frame of the texts does not say its size")
        self._frames = list(frames)
        self._ends = np.cumsum(sizes, dtype=np.int64)
        if skip < 0 or length < 0 or skip + length > (int(self._ends[-1]) if sizes else 0):
            raise CorruptSnapshot(f"the texts' frames end before byte {skip + length}")
        self._skip, self._length = skip, length
        self._cached: OrderedDict[int, bytes] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, where: slice) -> bytes | bytearray:
        start, stop, step = where.indices(self._length)
        if step != 1:
            raise ValueError("texts are sliced in order")
        if start >= stop:
            return b""
        low, high = start + self._skip, stop + self._skip
        first, last = np.searchsorted(self._ends, [low, high - 1], side="right").tolist()
        if first == last:
            begin = int(self._ends[first - 1]) if first else 0
            return self._frame(first)[low - begin : high - begin]
        # Many frames (an encode of the whole state): into one buffer as they come, neither
        # kept nor joined at the end, which held the texts twice
        out = bytearray(high - low)
        at = 0
        for k in range(first, last + 1):
            begin = int(self._ends[k - 1]) if k else 0
            frame = self._decompressed(k)
            piece = memoryview(frame)[max(low - begin, 0) : high - begin]
            out[at : at + len(piece)] = piece
            at += len(piece)
        return out

    def __bytes__(self) -> bytes:
        return bytes(self[:])

    def _frame(self, k: int) -> bytes:
        with self._lock:
            found = self._cached.get(k)
            if found is not None:
                self._cached.move_to_end(k)
                return found
        frame = self._decompressed(k)
        with self._lock:
            if k not in self._cached:
                self._cached[k] = frame
                self._cached_bytes += len(frame)
            while self._cached_bytes > CACHED_BYTES and len(self._cached) > 1:
                _, gone = self._cached.popitem(last=False)
                self._cached_bytes -= len(gone)
        return frame

    def _decompressed(self, k: int) -> bytes:
        try:
            return zstandard.ZstdDecompressor().decompress(self._frames[k])  # type: ignore[no-any-return]
        except zstandard.ZstdError as exc:
            raise CorruptSnapshot(f"a frame of the texts cannot be decompressed: {exc}") from exc
