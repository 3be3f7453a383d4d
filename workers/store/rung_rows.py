"""The rows of a tenant's snapshot rungs, kept once for all of them.

Every snapshot of one epoch of a log holds the same rows before its newest ones, with the
same texts and concepts (engine/snapshot/rows_apart.py), and those are most of its bytes.
So a rung is kept as its snapshot without them (`apart_pieces`), naming where its rows are
in three files the rungs of the epoch share, which only grow: the texts, the concept lists,
and where each row's start in both. Whoever saves a rung appends the rows past those held
(under the tenant's lock, workers/store/snapshot_rungs.py), and `rows.json` then says how
many are held: what a writer killed mid-append left past that is cut off by the next one
(`trim`). Readers take no lock: a rung names rows held before it was written, and those
bytes never change while the epoch lasts.
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
from assocmem.engine.snapshot.rows_apart import SplitRows
from assocmem.workers.store.private_paths import write_private

APART_MAGIC = b"AMROWS\x00\x01"
"""Heads a rung kept without its rows: then the length of a JSON header naming them, the
header (padded to 8 bytes, so the snapshot after it stays aligned), and the snapshot."""
TEXT, CONCEPTS, STARTS, HELD = "rows.text", "rows.concepts", "rows.starts", "rows.json"
FILES = (TEXT, CONCEPTS, STARTS, HELD)


@dataclasses.dataclass(frozen=True, slots=True)
class Span:
    """Where a rung's rows are in the shared files: bytes of texts, concept indices."""

    text: tuple[int, int]
    concepts: tuple[int, int]


class SharedRows:
    """The rows shared by the rungs in `here` (one tenant's epoch)."""

    def __init__(self, here: Path) -> None:
        self.here = here

    def held(self) -> tuple[int, int, int]:
        """Rows held, and the texts' bytes and concept indices they take."""
        try:
            held = orjson.loads((self.here / HELD).read_bytes())
            return int(held["rows"]), int(held["text"]), int(held["concepts"])
        except FileNotFoundError:
            return 0, 0, 0
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptSnapshot(f"the rungs' rows index {self.here / HELD}: {exc}") from exc

    def trim(self) -> None:
        """Cut off what a writer killed mid-append left past the rows held (the caller holds
        the tenant's lock)."""
        rows, text, concepts = self.held()
        for name, size in ((TEXT, text), (CONCEPTS, 4 * concepts), (STARTS, 16 * (rows + 1))):
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

    def hold(self, split: SplitRows) -> Span | None:
        """Where `split`'s rows are, once those past the rows held are appended (the caller
        holds the tenant's lock); None if they do not line up with those held: its first
        row is past them, or a row held has other lengths (a state not of this epoch's log)."""
        rows, _, _ = self.held()
        count = len(split.text_lengths)
        if split.start > rows:
            return None
        starts = self._starts(rows)
        overlap = min(rows, split.start + count) - split.start
        held = np.diff(starts[split.start : split.start + overlap + 1], axis=0)
        if not (
            np.array_equal(held[:, 0], split.text_lengths[:overlap])
            and np.array_equal(held[:, 1], split.lengths[:overlap])
        ):
            return None
        if split.start + count > rows:
            self._append(split, overlap, starts[rows])
            starts = self._starts(split.start + count)
        first, last = starts[split.start], starts[split.start + count]
        return Span((int(first[0]), int(last[0])), (int(first[1]), int(last[1])))

    def _starts(self, rows: int) -> np.ndarray:
        """Where rows 0 to `rows` start in the texts and the concepts (the last: where all
        end), as (text, concepts) pairs."""
        if rows == 0:
            return np.zeros((1, 2), dtype="<i8")
        starts = np.fromfile(self.here / STARTS, dtype="<i8", count=2 * (rows + 1))
        if len(starts) != 2 * (rows + 1):
            raise CorruptSnapshot(f"the rungs' rows {self.here / STARTS} are cut short")
        return starts.reshape(-1, 2)

    def _append(self, split: SplitRows, skipped: int, end: np.ndarray) -> None:
        """`split`'s rows past its first `skipped` (held already), after the rows held,
        which end at `end` (text, concepts); then the count held says so."""
        text_from = int(split.text_lengths[:skipped].sum())
        concepts_from = int(split.lengths[:skipped].sum())
        text = split.text[text_from:]
        concepts = split.concepts[concepts_from:]
        ends = np.empty((len(split.text_lengths) - skipped, 2), dtype="<i8")
        np.cumsum(split.text_lengths[skipped:], out=ends[:, 0])
        np.cumsum(split.lengths[skipped:], out=ends[:, 1])
        ends += end
        if not (self.here / STARTS).exists():
            _append(self.here / STARTS, [np.zeros(2, dtype="<i8")])
        _append(self.here / TEXT, [text])
        _append(self.here / CONCEPTS, [concepts.astype("<i4", copy=False)])
        _append(self.here / STARTS, [ends])
        rows = split.start + len(split.text_lengths)
        total = ends[-1] if len(ends) else end
        held = {"rows": rows, "text": int(total[0]), "concepts": int(total[1])}
        write_private(self.here / HELD, [orjson.dumps(held)])

    def apart(self, rest: bytes | memoryview, span: Span) -> RowsApart:
        """The snapshot `rest` with the rows `span` names, as views of the shared files
        (mapped copy-on-write: a read never touches the pages of the texts it does not
        show). CorruptSnapshot if the files hold less."""
        return RowsApart(
            rest,
            _mapped(self.here / TEXT, "u1", span.text),
            _mapped(self.here / CONCEPTS, "<i4", span.concepts),
        )


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


def _mapped(path: Path, dtype: str, span: tuple[int, int]) -> np.ndarray:
    start, end = span
    if start == end:
        return np.zeros(0, dtype=dtype)
    size = np.dtype(dtype).itemsize
    try:
        with path.open("rb", buffering=0) as file:
            if os.fstat(file.fileno()).st_size < end * size:
                raise CorruptSnapshot(f"the rungs' rows {path} are cut short")
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
    except (FileNotFoundError, ValueError) as exc:
        raise CorruptSnapshot(f"the rungs' rows {path}: {exc}") from exc
    return np.frombuffer(mapped, dtype=dtype, count=end - start, offset=start * size)


def _append(path: Path, arrays: Iterable[np.ndarray]) -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "wb") as file:
        for array in arrays:
            file.write(memoryview(np.ascontiguousarray(array)).cast("B"))
