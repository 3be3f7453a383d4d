"""Per concept, the rows of the memories carrying it and the tier it has there.

Kept as a few segments, each one CSR layout (concept -> its rows, ascending) of a run of
rows added together: a fold's notes, a loaded snapshot. A new segment is merged into the
one before it while that one is at most MERGE_RATIO times its size, so there are a few
segments at any time and each entry is copied a few times in all; a concept's rows are
its parts of the segments, in order. An array per concept, appended to at every fold, made
a Python step of each concept a fold touched, a large part of every batch the API folds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse

MERGE_RATIO = 4
"""A segment is merged into the one before it while that one holds at most this many times
its entries."""
MERGED_AT_MOST = 1 << 22
"""Entries of a segment that no newer one is merged into (a merge of tens of millions of
entries would hold a reader for seconds): past it, segments of this size gather."""

_NO_ROWS = np.zeros(0, dtype=np.int32)
_NO_TIERS = np.zeros(0, dtype=np.int8)


@dataclasses.dataclass(frozen=True, slots=True)
class _Segment:
    indptr: np.ndarray
    """int64, one more than the concepts known when it was made (later ones have no rows)."""
    rows: np.ndarray
    tiers: np.ndarray

    @classmethod
    def of(
        cls, offsets: np.ndarray, concepts: np.ndarray, tiers: np.ndarray, first: int, size: int
    ) -> _Segment:
        """Rows `first`, `first + 1`, ... grouped by concept, each concept's rows ascending:
        row `first + r` carries `concepts[offsets[r]:offsets[r + 1]]`. Those rows as a CSR
        table, row x concept, transposed (one counting sort in C). Built from concept x row
        coordinates instead, a load spent much of its time repeating each row's number for
        its concepts and counting them again."""
        index = index_type(int(offsets[-1]))
        table = scipy.sparse.csr_array(
            (tiers, concepts.astype(index, copy=False), offsets.astype(index, copy=False)),
            shape=(len(offsets) - 1, size),
        ).tocsc()
        rows = table.indices.astype(np.int32, copy=False)
        rows += first  # the transpose's own array: no copy made for this
        return cls(
            table.indptr.astype(np.int64, copy=False), rows, table.data.astype(np.int8, copy=False)
        )

    @property
    def entries(self) -> int:
        return len(self.rows)

    def table(self, size: int, columns: int) -> scipy.sparse.csr_array:
        """Concept x row, the tier + 1 in each cell; `size` concepts (at least those known)."""
        indptr = np.empty(size + 1, dtype=index_type(self.entries))
        known = len(self.indptr)
        indptr[:known] = self.indptr
        indptr[known:] = self.indptr[-1]
        rows = self.rows.astype(indptr.dtype, copy=False)
        return scipy.sparse.csr_array((self.tiers + 1, rows, indptr), shape=(size, columns))

    def part(self, concept: int) -> tuple[np.ndarray, np.ndarray]:
        if concept + 1 >= len(self.indptr):
            return _NO_ROWS, _NO_TIERS
        start, end = self.indptr[concept], self.indptr[concept + 1]
        return self.rows[start:end], self.tiers[start:end]


def index_type(entries: int) -> type[np.signedinteger]:
    """int32 where it holds the positions of `entries` entries (the index type of every
    sparse table here: postings, counts, snapshots): scipy makes every index of a table int64
    if one given array is, and a transpose of int64 indices takes several times as long
    as one of int32 ones."""
    return np.int32 if entries <= np.iinfo(np.int32).max else np.int64


def _merged(first: _Segment, second: _Segment, size: int) -> _Segment:
    """One segment of both, the rows of `first` before those of `second` in each concept:
    the sum of the two as concept x row tables (disjoint cells, tier + 1 in each, so none
    is 0), which merges concept by concept in C."""
    columns = int(max(first.rows.max(), second.rows.max())) + 1
    merged = first.table(size, columns) + second.table(size, columns)
    return _Segment(
        merged.indptr.astype(np.int64, copy=False),
        merged.indices.astype(np.int32, copy=False),
        (merged.data - 1).astype(np.int8, copy=False),
    )


class Postings:
    def __init__(self) -> None:
        self._segments: list[_Segment] = []
        self._known = 0
        """Concepts there is room for (`grow`)."""
        self._sizes = np.zeros(0, dtype=np.int64)
        """Rows per concept, all segments together (with spare room at the end)."""

    def grow(self, size: int) -> None:
        """Room for `size` concepts (called for each new one: mostly nothing to do)."""
        if size <= self._known:
            return
        self._known = size
        if size > len(self._sizes):
            grown = np.zeros(max(size, 2 * len(self._sizes)), dtype=np.int64)
            grown[: len(self._sizes)] = self._sizes
            self._sizes = grown

    def extend(
        self, offsets: np.ndarray, concepts: np.ndarray, tiers: np.ndarray, first: int
    ) -> None:
        """Add rows `first`, `first + 1`, ... after those held: row `first + r` carries
        `concepts[offsets[r]:offsets[r + 1]]` (each once), with their `tiers`."""
        if not len(concepts):
            return
        size = self._known
        segment = _Segment.of(offsets, concepts, tiers, first, size)
        self._sizes[:size] += np.diff(segment.indptr)
        segments = self._segments
        segments.append(segment)
        while (
            len(segments) > 1
            and segments[-2].entries <= MERGE_RATIO * segments[-1].entries
            and segments[-2].entries < MERGED_AT_MOST
        ):
            last = segments.pop()
            segments[-1] = _merged(segments[-1], last, size)

    def of(self, concept: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows (ascending) and tiers: views of one segment, or its parts joined."""
        parts = [part for s in self._segments if len((part := s.part(concept))[0])]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return _NO_ROWS, _NO_TIERS
        return np.concatenate([r for r, _ in parts]), np.concatenate([t for _, t in parts])

    def size(self, concept: int) -> int:
        return int(self._sizes[concept]) if concept < len(self._sizes) else 0
