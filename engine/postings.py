"""Per concept, the rows of the memories carrying it and the tier it has there.

Kept as a few segments, each one CSR layout (concept -> its rows, ascending) of a run of
rows added together: a fold's notes, a loaded snapshot. A new segment is merged into the
one before it while that one is at most MERGE_RATIO times its size, so there are a few
segments at any time and each entry is copied a few times in all; a concept's rows are
its parts of the segments, in order. An array per concept, appended to at every fold, made
a Python step of each concept a fold touched: 20 ms of every batch of 500 commit messages
the API folds.
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
    def of(cls, concepts: np.ndarray, rows: np.ndarray, tiers: np.ndarray, size: int) -> _Segment:
        """Entries grouped by concept, each concept's rows ascending: concept x row as CSR,
        the tier + 1 in each cell (one counting sort in C; no two cells are one)."""
        table = scipy.sparse.csr_array(
            (tiers.astype(np.int8) + 1, (concepts, rows)), shape=(size, int(rows.max()) + 1)
        )
        return cls(
            table.indptr.astype(np.int64, copy=False),
            table.indices.astype(np.int32, copy=False),
            table.data - 1,
        )

    @property
    def entries(self) -> int:
        return len(self.rows)

    def concepts(self) -> np.ndarray:
        """The concept of each entry."""
        return np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))

    def part(self, concept: int) -> tuple[np.ndarray, np.ndarray]:
        if concept + 1 >= len(self.indptr):
            return _NO_ROWS, _NO_TIERS
        start, end = self.indptr[concept], self.indptr[concept + 1]
        return self.rows[start:end], self.tiers[start:end]


def _merged(first: _Segment, second: _Segment, size: int) -> _Segment:
    """One segment of both, the rows of `first` before those of `second` in each concept."""
    return _Segment.of(
        np.concatenate([first.concepts(), second.concepts()]),
        np.concatenate([first.rows, second.rows]),
        np.concatenate([first.tiers, second.tiers]),
        size,
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

    def extend(self, concepts: np.ndarray, rows: np.ndarray, tiers: np.ndarray) -> None:
        """Add each (concept, row, tier); rows ascending, each (concept, row) once, after
        those held."""
        if not len(concepts):
            return
        size = self._known
        self._sizes[:size] += np.bincount(concepts, minlength=size)
        segments = self._segments
        segments.append(_Segment.of(concepts, rows, tiers, size))
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
