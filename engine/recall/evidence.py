"""Evidence per query concept: how strongly each candidate memory answers each concept of a
query, and the one relevance all stages add up to.

A query concept is answered directly (the memory carries it), as a near miss (a typo, an
inflection), through a link (the memory carries a concept linked to it) or along a chain
(a concept several links away). Relevance is the idf-weighted mean, over the query's
concepts, of the best evidence the memory holds for each: BM25 with term frequency 1,
extended the way translation models extend it (a linked concept is partial evidence for
the concept it is linked to). So a memory carrying two strongly linked concepts can
outrank one that matches only a common word, and one matching the telling concepts
outranks both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

DIRECT, FUZZY, LINK, CHAIN, TIME = range(5)
"""Kinds of evidence, in the order that labels an item: the first kind that found it."""
NONE = TIME + 1


class Relevance(NamedTuple):
    """Per candidate memory, each in 0-1."""

    full: np.ndarray
    """Every kind of evidence."""
    direct: np.ndarray
    """Direct and near-miss evidence alone: what `fast` ranks by."""
    carries: np.ndarray
    """Per candidate (row) and query concept (column), whether the memory carries it: the
    concept or a near miss of one, or, for a concept naming the read's time range or time
    hint, being written in it, whatever its tier and length."""
    kinds: np.ndarray
    """The first kind of evidence that found the memory: the one that labels its item."""


class Evidence:
    """Parts of evidence (query concept, kind, rows, values in 0-1) gathered by a read.

    Only the memories some part touched are scored: a read costs what its postings hold,
    not what the whole state holds.
    """

    def __init__(self, weights: list[float]) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        """Per query concept (slot), how telling it is (its idf)."""
        self.parts: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        self.carriers: list[tuple[int, np.ndarray]] = []

    def add(self, slot: int, kind: int, rows: np.ndarray, values: np.ndarray | float) -> None:
        """`rows` hold each memory at most once (one concept's postings)."""
        if len(rows):
            self.parts.append((slot, kind, rows, np.broadcast_to(values, rows.shape)))

    def carry(self, slot: int, rows: np.ndarray) -> None:
        """The memories at ascending `rows` carry the concept of `slot` (they were written at
        the time it names), whether or not they hold it: it counts in their cover, not in
        their score, and finds none of them."""
        self.carriers.append((slot, rows))

    def candidates(self, size: int) -> np.ndarray:
        """Ascending rows some part touched, of `size` memories."""
        touched = np.zeros(size, dtype=bool)
        for _, _, rows, _ in self.parts:
            touched[rows] = True
        return np.flatnonzero(touched)

    def relevance(self, candidates: np.ndarray, size: int) -> Relevance:
        """Per candidate, relevance in 0-1, with the direct part of it and the query concepts
        the candidate carries.

        Within a query concept, direct and near-miss evidence count by their best, and links
        and chains add up like independent clues (noisy-or: 1 - prod(1 - v)); the concept
        counts the stronger of the two.
        """
        at = np.empty(size, dtype=np.int64)
        at[candidates] = np.arange(len(candidates))
        full, direct = np.zeros(len(candidates)), np.zeros(len(candidates))
        carries = np.zeros((len(candidates), len(self.weights)), dtype=bool)
        kinds = np.full(len(candidates), NONE, dtype=np.int8)
        total = float(self.weights.sum()) or 1.0
        by_slot: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
        for slot, kind, rows, values in self.parts:
            index = at[rows]
            kinds[index] = np.minimum(kinds[index], kind)
            if slot >= 0:
                by_slot.setdefault(slot, []).append((kind, index, values))
        for slot, parts in by_slot.items():
            best = np.zeros(len(candidates))
            carried = np.zeros(len(candidates), dtype=bool)
            missed: np.ndarray | None = None
            for kind, index, values in parts:
                if kind in (DIRECT, FUZZY):
                    best[index] = np.maximum(best[index], values)
                elif kind == TIME:
                    carried[index] = True
                else:
                    missed = np.zeros(len(candidates)) if missed is None else missed
                    missed[index] += np.log1p(-values)
            for carried_slot, rows in self.carriers:
                if carried_slot == slot:
                    carried[_among(candidates, rows)] = True
            weight = self.weights[slot]
            direct += weight * best
            carries[:, slot] = carried | (best > 0)
            if missed is not None:
                best = np.maximum(best, -np.expm1(missed))
            full += weight * best
        return Relevance(full / total, direct / total, carries, kinds)

    def shares(self) -> np.ndarray:
        """Per query concept, its share of the question's weight."""
        return self.weights / (float(self.weights.sum()) or 1.0)


def _among(candidates: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The places in ascending `candidates` of those of ascending `rows` among them."""
    at = np.searchsorted(candidates, rows)
    inside = at < len(candidates)
    at = at[inside]
    return at[candidates[at] == rows[inside]]


def kinds_of(candidates: np.ndarray, kinds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per row, the first kind of evidence that found it (`kinds`, per candidate, of a
    read's ascending `candidates`); NONE for a row no evidence touched."""
    if not len(candidates):
        return np.full(len(rows), NONE, dtype=np.int8)
    at = np.minimum(np.searchsorted(candidates, rows), len(candidates) - 1)
    return np.where(candidates[at] == rows, kinds[at], NONE).astype(np.int8)
