"""The folded state: memories, the concept vocabulary, and the two kinds of links.

Written links (co-occurrence counts) and taught links (learned deltas from
feedback) are kept apart so they can always be told apart; a link's weight is
their sum, never below zero.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np
import scipy.sparse

from .position import ZERO


@dataclasses.dataclass(slots=True)
class Memory:
    id: str
    text: str
    concepts: tuple[str, ...]
    agent: str
    ts: float
    importance: int
    user: str | None = None
    valence: float = 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Link:
    count: int
    learned: float
    changed_at: str

    @property
    def weight(self) -> float:
        return max(0.0, self.count + self.learned)

    @property
    def is_taught(self) -> bool:
        return self.learned > 0


def pair(i: int, j: int) -> tuple[int, int]:
    return (i, j) if i < j else (j, i)


class State:
    """Mutable state owned by whoever folds into it; `fold` is its only writer."""

    def __init__(self) -> None:
        self.position: str = ZERO
        self.memories: dict[str, Memory] = {}
        self.concepts: list[str] = []
        self.concept_index: dict[str, int] = {}
        self.postings: dict[int, list[str]] = {}
        self.counts: dict[int, dict[int, int]] = {}
        self.learned: dict[int, dict[int, float]] = {}
        self.changed_at: dict[tuple[int, int], str] = {}

    def intern(self, concept: str) -> int:
        index = self.concept_index.get(concept)
        if index is None:
            index = len(self.concepts)
            self.concepts.append(concept)
            self.concept_index[concept] = index
        return index

    def link(self, i: int, j: int) -> Link:
        return Link(
            count=self.counts.get(i, {}).get(j, 0),
            learned=self.learned.get(i, {}).get(j, 0.0),
            changed_at=self.changed_at.get(pair(i, j), ZERO),
        )

    def neighbours(self, i: int) -> Iterator[int]:
        """Every concept linked to `i` by a count or a learned delta."""
        counted = self.counts.get(i, {})
        yield from counted
        for j in self.learned.get(i, {}):
            if j not in counted:
                yield j

    def memories_with(self, concept: str) -> list[str]:
        index = self.concept_index.get(concept)
        return [] if index is None else self.postings.get(index, [])

    def add_counts(self, pairs: Iterable[tuple[int, int]], position: str) -> None:
        """Add one co-occurrence to each (i, j) pair; the hot loop of every write, kept flat."""
        counts, changed = self.counts, self.changed_at
        for i, j in pairs:
            row_i = counts.get(i)
            if row_i is None:
                row_i = counts[i] = {}
            row_j = counts.get(j)
            if row_j is None:
                row_j = counts[j] = {}
            row_i[j] = row_i.get(j, 0) + 1
            row_j[i] = row_j.get(i, 0) + 1
            changed[(i, j) if i < j else (j, i)] = position

    def set_learned(self, i: int, j: int, value: float, position: str) -> None:
        for a, b in ((i, j), (j, i)):
            self.learned.setdefault(a, {})[b] = value
        self.changed_at[pair(i, j)] = position

    def count_matrix(self) -> scipy.sparse.csr_array:
        """Co-occurrence counts as a symmetric concepts x concepts sparse matrix."""
        return _symmetric_matrix(self.counts, len(self.concepts), np.int64)

    def learned_matrix(self) -> scipy.sparse.csr_array:
        return _symmetric_matrix(self.learned, len(self.concepts), np.float64)


def _symmetric_matrix(rows: dict, size: int, dtype: type) -> scipy.sparse.csr_array:  # type: ignore[type-arg]
    r, c, v = [], [], []
    for i, row in rows.items():
        for j, value in row.items():
            r.append(i)
            c.append(j)
            v.append(value)
    return scipy.sparse.csr_array((np.array(v, dtype=dtype), (r, c)), shape=(size, size))
