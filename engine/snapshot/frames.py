"""A snapshot's bytes <-> a compressed blob: zstd frames, made and read on threads.

A snapshot of more than FRAME_BYTES is cut into frames of that size, compressed apart and
decompressed apart, each on one of THREADS threads (zstd lets go of the GIL), straight into
the one buffer a load's arrays are views of. A skippable frame before them (which zstd
tools pass over) holds each one's compressed size, so a reader finds them without
decompressing. A smaller snapshot is one frame, as every snapshot was before: both are read.
In one frame, decompression was most of the load of a large snapshot.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import zstandard

from assocmem.engine.errors import CorruptSnapshot

FRAME_BYTES = 8 << 20
"""Uncompressed bytes per frame (zstd at level 1 looks back 512 KB: frames cost no size)."""
THREADS = min(
    4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
)
"""Frames compressed or decompressed at once."""
UNPACKED_MAGIC = b"AMSNAP\x00\x01"
"""Heads a snapshot kept unpacked: its bytes as they are, not compressed, for a reader that
maps the file rather than decompressing it (workers/store/snapshot_rungs.py). Eight bytes, so the
sections after it stay as aligned as in a buffer of their own."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
TABLE_MAGIC = struct.pack("<I", 0x184D2A5A)
"""A zstd skippable frame's, for the table of frame sizes."""


def compress_snapshot(raw: Sequence[memoryview], frame_bytes: int | None = None) -> bytes:
    """`raw`'s pieces, one after the other, compressed: zstd at level 1, a third of zlib's
    time at its fastest, for the same size, in frames of `frame_bytes` (FRAME_BYTES). Each
    frame says its size, so a load decompresses into one buffer."""
    frames = _cut(raw, frame_bytes or FRAME_BYTES)
    if len(frames) == 1:
        return _compressed(frames[0])
    with ThreadPoolExecutor(THREADS) as pool:
        compressed = list(pool.map(_compressed, frames))
    table = np.array(list(map(len, compressed)), dtype="<u8").tobytes()
    return b"".join([TABLE_MAGIC, struct.pack("<I", len(table)), table, *compressed])


def decompress_snapshot(blob: bytes | memoryview) -> np.ndarray:
    """A snapshot's bytes, in a buffer of their own that the arrays of a load are views of
    (writable, so none is copied; numpy's, which is not zeroed before the frames fill it,
    as a bytearray is); zlib-compressed ones (before zstd) are read too, and unpacked ones
    as they are (a view of a writable buffer, such as a file mapped copy-on-write)."""
    if is_unpacked(blob):
        raw = np.frombuffer(blob, dtype=np.uint8)[len(UNPACKED_MAGIC) :]
        return raw if raw.flags.writeable else raw.copy()
    frames = _zstd_frames(blob)
    if frames is None:
        return np.frombuffer(bytearray(zlib.decompress(blob)), dtype=np.uint8)
    if blob[:4] == ZSTD_MAGIC and zstandard.frame_content_size(blob) < 0:
        # a frame that does not say its size (none of ours)
        whole = bytearray(zstandard.ZstdDecompressor().decompressobj().decompress(blob))
        return np.frombuffer(whole, dtype=np.uint8)
    return _decompressed(frames)


def decompress_all(blobs: Sequence[bytes | memoryview]) -> np.ndarray:
    """Blobs `compress_snapshot` made, decompressed one after the other into one buffer (on
    threads, frame by frame, as one blob is)."""
    frames = [frame for blob in blobs for frame in frames_of(blob)]
    try:
        return _decompressed(frames) if frames else np.zeros(0, dtype=np.uint8)
    except zstandard.ZstdError as exc:
        raise CorruptSnapshot(f"a compressed piece cannot be decompressed: {exc}") from exc


def frames_of(blob: bytes | memoryview) -> list[memoryview]:
    """The zstd frames of a blob `compress_snapshot` made, each decompressible alone."""
    try:
        found = _zstd_frames(blob)
    except struct.error as exc:
        raise CorruptSnapshot(f"a compressed piece's table of frames is cut short: {exc}") from exc
    if found is None:
        raise CorruptSnapshot("a compressed piece is not zstd")
    return found


def is_unpacked(blob: bytes | memoryview) -> bool:
    """Whether `blob` is a snapshot kept unpacked (it starts with UNPACKED_MAGIC)."""
    return bytes(blob[: len(UNPACKED_MAGIC)]) == UNPACKED_MAGIC


def unpacked_snapshot(blob: bytes | memoryview) -> Iterator[bytes | memoryview]:
    """A snapshot's bytes as a reader may map them, in pieces of a frame at most, to be
    written out without holding them all at once (hundreds of MB at a million memories):
    UNPACKED_MAGIC, then the bytes `decompress_snapshot` gives."""
    if is_unpacked(blob):
        yield blob
        return
    yield UNPACKED_MAGIC
    try:
        frames = _zstd_frames(blob)
        if frames is None:
            yield zlib.decompress(blob)
            return
        for frame in frames:
            with zstandard.ZstdDecompressor().stream_reader(frame) as reader:
                while piece := reader.read(FRAME_BYTES):
                    yield piece
    except (zlib.error, zstandard.ZstdError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decompressed: {exc}") from exc


def _zstd_frames(blob: bytes | memoryview) -> list[memoryview] | None:
    """The zstd frames of a compressed snapshot (several after a table, or one); None for a
    zlib-compressed one (before zstd)."""
    if blob[:4] == TABLE_MAGIC:
        return _frames(blob)
    if blob[:4] == ZSTD_MAGIC:
        return [memoryview(blob)]
    return None


def _cut(pieces: Sequence[memoryview], most: int) -> list[list[memoryview]]:
    """The pieces' bytes in runs of `most` (the last one shorter), as slices of them."""
    frames: list[list[memoryview]] = [[]]
    room = most
    for piece in pieces:
        at = 0
        while at < piece.nbytes:
            if room == 0:
                frames.append([])
                room = most
            taken = min(room, piece.nbytes - at)
            frames[-1].append(piece[at : at + taken])
            at += taken
            room -= taken
    return frames


def _compressed(pieces: list[memoryview]) -> bytes:
    """One frame of `pieces` (a compressor per call: one is not to be shared by threads)."""
    compressor = zstandard.ZstdCompressor(level=1).compressobj(size=sum(p.nbytes for p in pieces))
    return b"".join([compressor.compress(piece) for piece in pieces] + [compressor.flush()])


def _frames(blob: bytes) -> list[memoryview]:
    """The frames a table frame at the head of `blob` names."""
    (length,) = struct.unpack_from("<I", blob, 4)
    if length % 8:
        raise CorruptSnapshot(f"snapshot's table of frames has {length} bytes: expected 8 each")
    if not length:
        raise CorruptSnapshot("snapshot's table of frames is empty")
    view, at, frames = memoryview(blob), 8 + length, []
    for size in struct.unpack_from(f"<{length // 8}Q", blob, 8):
        frames.append(view[at : at + size])
        at += size
    if at != len(blob):
        raise CorruptSnapshot(f"snapshot's frames end at byte {at}, its blob at {len(blob)}")
    return frames


def _decompressed(frames: list[memoryview]) -> np.ndarray:
    sizes = [zstandard.frame_content_size(frame) for frame in frames]
    if min(sizes) < 0:
        raise CorruptSnapshot("a frame of the snapshot does not say its size")
    ends = np.cumsum(sizes).tolist()
    raw = np.empty(ends[-1], dtype=np.uint8)
    view = memoryview(raw)

    def fill(k: int) -> None:
        at, end = ends[k] - sizes[k], ends[k]
        with zstandard.ZstdDecompressor().stream_reader(frames[k]) as reader:
            while at < end:
                read = reader.readinto(view[at:end])
                if read == 0:
                    raise CorruptSnapshot("snapshot is truncated")
                at += read

    if len(frames) == 1:
        fill(0)
    else:
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(fill, range(len(frames))))
    return raw
