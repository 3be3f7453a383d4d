"""The rows of a tenant's snapshot rungs, kept once for all of them.

Every snapshot of one epoch of a log holds the same rows before its newest ones, with the
same texts and concepts (engine/snapshot/rows_apart.py), and those are most of its bytes.
So a rung is kept as its snapshot without them (`apart_pieces`), naming where its rows are
in files the rungs of the epoch share, which only grow: the texts and the concept lists,
compressed a chunk per save, where each chunk ends, and where each row starts. Whoever
saves a rung appends the rows past those held (under the tenant's lock,
workers/store/snapshot_rungs.py), and `rows.json` then says how many are held: what a
writer killed mid-append left past that is cut off by the next one (`trim`). Readers take
no lock: a rung names rows held before it was written, and those bytes never change while
the epoch lasts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import mmap
import os
import struct
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import orjson

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.snapshot.codec import RowsApart
from assocmem.engine.snapshot.frames import compress_snapshot, decompress_all, frames_of
from assocmem.engine.snapshot.rows_apart import SplitRows
from assocmem.engine.state.packed_text import PackedText
from assocmem.workers.store.private_paths import write_private

APART_MAGIC = b"AMROWS\x00\x01"
"""Heads a rung kept without its rows: then the length of a JSON header naming them, the
header (padded to 8 bytes, so the snapshot after it stays aligned), and the snapshot."""
TEXT, CONCEPTS, STARTS, CHUNKS, HELD = (
    "rows.text",
    "rows.concepts",
    "rows.starts",
    "rows.chunks",
    "rows.json",
)
FILES = (TEXT, CONCEPTS, STARTS, CHUNKS, HELD)
TEXT_FRAME_BYTES = 1 << 20
"""Texts per zstd frame: a read of a few memories' texts decompresses the frames they are
in (engine/state/packed_text.py), up to 8 MB each in a snapshot's frames."""


@dataclasses.dataclass(frozen=True, slots=True)
class Span:
    """Where a rung's rows are in the shared rows: bytes of texts, concept indices."""

    text: tuple[int, int]
    concepts: tuple[int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class Held:
    """What `rows.json` says the shared files hold: rows, the texts' bytes and the concept
    indices they take, the chunks appended, and the bytes those take in each file."""

    rows: int = 0
    text: int = 0
    concepts: int = 0
    chunks: int = 0
    text_stored: int = 0
    concepts_stored: int = 0


class SharedRows:
    """The rows shared by the rungs in `here` (one tenant's epoch). Each save's rows are
    appended as one chunk to each file, compressed (engine/snapshot/frames.py): a load
    decompresses a rung's concepts on threads and leaves its texts packed until a read asks
    for some (engine/state/packed_text.py), and the disk they would take unpacked (about
    three times as much) goes to more rungs instead (figures in bench/README.md).
    `rows.chunks` says where each chunk ends, unpacked and as stored, in both files;
    `rows.starts` where each row starts."""

    def __init__(self, here: Path) -> None:
        self.here = here

    def held(self) -> Held:
        try:
            return Held(**orjson.loads((self.here / HELD).read_bytes()))
        except FileNotFoundError:
            return Held()
        except (OSError, ValueError, TypeError) as exc:
            raise CorruptSnapshot(f"the rungs' rows index {self.here / HELD}: {exc}") from exc

    def trim(self) -> None:
        """Cut off what a writer killed mid-append left past the rows held (the caller holds
        the tenant's lock)."""
        held = self.held()
        sizes = {
            TEXT: held.text_stored,
            CONCEPTS: held.concepts_stored,
            STARTS: 16 * (held.rows + 1) if held.rows else 0,
            CHUNKS: 32 * held.chunks,
        }
        for name, size in sizes.items():
            with contextlib.suppress(FileNotFoundError):
                if (self.here / name).stat().st_size > size:
                    os.truncate(self.here / name, size)

    def bytes(self) -> int:
        """What the shared files take on disk."""
        total = 0
        for name in FILES:
            with contextlib.suppress(FileNotFoundError):
                total += (self.here / name).stat().st_size
        return total

    def hold(self, split: SplitRows, held: Held | None = None) -> Span | None:
        """Where `split`'s rows are, once those past the rows held are appended (the caller
        holds the tenant's lock; `held`: what `held()` says now, if it has read it); None if
        they do not line up with those held: its first row is past them, or a row held has
        other lengths (a state not of this epoch's log)."""
        held = self.held() if held is None else held
        count = len(split.text_lengths)
        if split.start > held.rows:
            return None
        overlap = min(held.rows, split.start + count) - split.start
        starts = self._starts(split.start, split.start + overlap)
        lengths = np.diff(starts, axis=0)
        if not (
            np.array_equal(lengths[:, 0], split.text_lengths[:overlap])
            and np.array_equal(lengths[:, 1], split.lengths[:overlap])
        ):
            return None
        first, last = starts[0], starts[-1]
        if overlap < count:
            now = self._append(split, overlap, held)
            last = np.array([now.text, now.concepts])
        return Span((int(first[0]), int(last[0])), (int(first[1]), int(last[1])))

    def apart(self, rest: bytes | memoryview, span: Span) -> RowsApart:
        """The snapshot `rest` with the rows `span` names (CorruptSnapshot if the files hold
        less)."""
        chunks = self._chunks()
        return RowsApart(
            rest,
            _packed(self.here / TEXT, chunks[:, 0:2], span.text),
            _unpacked(self.here / CONCEPTS, chunks[:, 2:4], span.concepts, "<i4"),
        )

    def _starts(self, first: int, last: int) -> np.ndarray:
        """Where rows `first` to `last` start in the texts and the concepts (a row past the
        last held: where they all end), as (text, concepts) pairs; only those are read."""
        if last == 0:
            return np.zeros((1, 2), dtype="<i8")
        count = 2 * (last - first + 1)
        starts = np.fromfile(self.here / STARTS, dtype="<i8", count=count, offset=16 * first)
        if len(starts) != count:
            raise CorruptSnapshot(f"the rungs' rows {self.here / STARTS} are cut short")
        return starts.reshape(-1, 2)

    def _chunks(self) -> np.ndarray:
        """Per chunk appended: where it ends in the texts, unpacked and stored, then in the
        concepts (those a writer is appending now too: a rung never names them)."""
        try:
            chunks = np.fromfile(self.here / CHUNKS, dtype="<i8")
        except FileNotFoundError:
            chunks = np.zeros(0, dtype="<i8")
        return chunks[: len(chunks) // 4 * 4].reshape(-1, 4)

    def _append(self, split: SplitRows, skipped: int, held: Held) -> Held:
        """`split`'s rows past its first `skipped` (held already), as one more chunk; then
        `rows.json` says they are held (what it says is returned)."""
        text = split.text[int(split.text_lengths[:skipped].sum()) :]
        concepts = split.concepts[int(split.lengths[:skipped].sum()) :]
        ends = np.empty((len(split.text_lengths) - skipped, 2), dtype="<i8")
        np.cumsum(split.text_lengths[skipped:], out=ends[:, 0])
        np.cumsum(split.lengths[skipped:], out=ends[:, 1])
        ends += (held.text, held.concepts)
        packed_text = compress_snapshot(
            [memoryview(np.ascontiguousarray(text)).cast("B")], TEXT_FRAME_BYTES
        )
        packed_concepts = compress_snapshot(
            [memoryview(np.ascontiguousarray(concepts, dtype="<i4")).cast("B")]
        )
        now = Held(
            rows=split.start + len(split.text_lengths),
            text=held.text + len(text),
            concepts=held.concepts + len(concepts),
            chunks=held.chunks + 1,
            text_stored=held.text_stored + len(packed_text),
            concepts_stored=held.concepts_stored + len(packed_concepts),
        )
        if not held.rows:
            _append(self.here / STARTS, [np.zeros(2, dtype="<i8")])
        _append(self.here / TEXT, [packed_text])
        _append(self.here / CONCEPTS, [packed_concepts])
        _append(self.here / STARTS, [ends])
        chunk = (now.text, now.text_stored, now.concepts, now.concepts_stored)
        _append(self.here / CHUNKS, [np.array(chunk, dtype="<i8")])
        write_private(self.here / HELD, [orjson.dumps(dataclasses.asdict(now))])
        return now


def apart_pieces(span: Span, rest: Iterable[bytes | memoryview]) -> list[bytes | memoryview]:
    """The pieces of a rung file that names `span` for its rows, before `rest` (the snapshot
    without them, unpacked or compressed)."""
    header = orjson.dumps({"text": span.text, "concepts": span.concepts})
    header += b" " * (-len(header) % 8)
    return [APART_MAGIC, struct.pack("<Q", len(header)), header, *rest]


def read_apart(view: bytes | memoryview) -> tuple[Span, bytes | memoryview] | None:
    """The span a rung file names and its snapshot; None for a file of a whole snapshot."""
    if bytes(view[: len(APART_MAGIC)]) != APART_MAGIC:
        return None
    try:
        at = len(APART_MAGIC)
        (size,) = struct.unpack_from("<Q", view, at)
        header = orjson.loads(bytes(view[at + 8 : at + 8 + size]))
        span = Span(tuple(header["text"]), tuple(header["concepts"]))  # type: ignore[arg-type]
    except (struct.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptSnapshot(f"a rung's header is unreadable: {exc}") from exc
    return span, view[at + 8 + size :]


def _packed(path: Path, chunks: np.ndarray, span: tuple[int, int]) -> PackedText:
    """Bytes `span` of the texts in `path` (`chunks` as `_unpacked` takes them), still
    compressed: the file is mapped, and a slice decompresses the frames it needs."""
    start, end = span
    if start == end:
        return PackedText([], 0, 0)
    first, last = _chunks_of(path, chunks, span)
    stored = np.concatenate([[0], chunks[:, 1]])
    try:
        with path.open("rb", buffering=0) as file:
            mapped = memoryview(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))
    except (FileNotFoundError, ValueError) as exc:
        raise CorruptSnapshot(f"the rungs' rows {path}: {exc}") from exc
    if len(mapped) < stored[last + 1]:
        raise CorruptSnapshot(f"the rungs' rows {path} are cut short")
    frames = [
        frame
        for k in range(first, last + 1)
        for frame in frames_of(mapped[int(stored[k]) : int(stored[k + 1])])
    ]
    unpacked_from = int(chunks[first - 1, 0]) if first else 0
    return PackedText(frames, start - unpacked_from, end - start)


def _chunks_of(path: Path, chunks: np.ndarray, span: tuple[int, int]) -> tuple[int, int]:
    """The first and last chunk items `span` are in."""
    start, end = span
    first = int(np.searchsorted(chunks[:, 0], start, side="right"))
    last = int(np.searchsorted(chunks[:, 0], end, side="left"))
    if last >= len(chunks):
        raise CorruptSnapshot(f"the rungs' rows {path} end before item {end}")
    return first, last


def _unpacked(path: Path, chunks: np.ndarray, span: tuple[int, int], dtype: str) -> np.ndarray:
    """Items `span` of the chunks of `path` (`chunks`: where each ends, unpacked and stored,
    in bytes or in items), decompressed: those of the chunks they are in, in one buffer."""
    start, end = span
    if start == end:
        return np.zeros(0, dtype=dtype)
    first, last = _chunks_of(path, chunks, span)
    stored = np.concatenate([[0], chunks[:, 1]])
    unpacked_from = int(chunks[first - 1, 0]) if first else 0
    try:
        with path.open("rb", buffering=0) as file:
            file.seek(int(stored[first]))
            raw = file.read(int(stored[last + 1] - stored[first]))
    except FileNotFoundError as exc:
        raise CorruptSnapshot(f"the rungs' rows {path}: {exc}") from exc
    view = memoryview(raw)
    pieces = [
        view[int(stored[k] - stored[first]) : int(stored[k + 1] - stored[first])]
        for k in range(first, last + 1)
    ]
    # Not `.view(dtype)`: a slice of that has the bytes as its base, and scipy, which counts
    # a base's items to tell a small view of a large array, took the million memories'
    # concepts for one and copied them (a tenth of a rung's load).
    items = np.frombuffer(memoryview(decompress_all(pieces)), dtype)
    return items[start - unpacked_from : end - unpacked_from]


def _append(path: Path, pieces: Iterable[bytes | np.ndarray]) -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "wb") as file:
        for piece in pieces:
            if isinstance(piece, np.ndarray):
                piece = memoryview(np.ascontiguousarray(piece)).cast("B")
            file.write(piece)
