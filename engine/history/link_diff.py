"""The links that appeared, vanished or changed weight between two points, written and
taught apart, biggest change first.

Worked out over arrays of both states' links (a key per concept pair): a dict per link, in
Python, took tens of seconds and a gigabyte for two points far apart, and the whole answer
(millions of changes) was sent, where people read the biggest changes and how many there
were.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from assocmem.engine.state.link_rule import link_weight
from assocmem.engine.state.state import State

SHIFT = np.int64(32)
"""A pair's key: its lower concept index shifted by this, plus the higher."""
LOW = np.int64((1 << 32) - 1)


@dataclasses.dataclass(frozen=True, slots=True)
class LinkChangeBetween:
    source: str
    target: str
    """The two concepts in name order, as people read them (their labels at the second point)."""
    source_key: str
    target_key: str
    before: tuple[int, float]
    """(written count, learned delta) at the first point."""
    after: tuple[int, float]


@dataclasses.dataclass(frozen=True, slots=True)
class LinkDifference:
    appeared: list[LinkChangeBetween]
    """A weight of 0 before, above after."""
    vanished: list[LinkChangeBetween]
    changed: list[LinkChangeBetween]
    """Weighed on both sides, or on neither (a count and a delta that cancel out)."""
    totals: dict[str, int]
    """How many of each kind there are: the lists hold the biggest `limit` of them."""


@dataclasses.dataclass(frozen=True, slots=True)
class Links:
    """A state's links, kept apart from it (the state may fold on)."""

    names: list[str]
    """The state's concepts, by index."""
    labels: list[str]
    """The words people read for them."""
    keys: np.ndarray
    """Ascending pair keys (see SHIFT)."""
    counts: np.ndarray
    learned: np.ndarray


def links_of(state: State) -> Links:
    matrix = state.counts.matrix()
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    columns = matrix.indices.astype(np.int64)
    upper = rows < columns
    taught = [
        (i, j, delta) for i, row in state.learned.items() for j, delta in row.items() if i < j
    ]
    pairs = np.array([(i, j) for i, j, _ in taught], dtype=np.int64).reshape(-1, 2)
    return _keyed(
        list(state.concepts),
        list(state.labels),
        (rows[upper] << SHIFT) | columns[upper],
        matrix.data[upper],
        (pairs[:, 0] << SHIFT) | pairs[:, 1],
        np.array([delta for _, _, delta in taught], dtype=np.float64),
    )


def link_difference(before: Links, after: Links, limit: int | None) -> LinkDifference:
    """Every link whose written count or learned delta differs between the two points;
    each kind listed biggest change of weight first, at most `limit` of it (None: all)."""
    names, labels, old = _in_names_of(before, after)
    keys = _union(old.keys, after.keys)
    c0, l0 = _at(old, keys)
    c1, l1 = _at(after, keys)
    moved = (c0 != c1) | (l0 != l1)
    keys, c0, l0, c1, l1 = keys[moved], c0[moved], l0[moved], c1[moved], l1[moved]
    w0, w1 = link_weight(c0.astype(np.float64), l0), link_weight(c1.astype(np.float64), l1)
    appeared, vanished = (w0 <= 0) & (w1 > 0), (w0 > 0) & (w1 <= 0)
    kinds = {"appeared": appeared, "vanished": vanished, "changed": ~(appeared | vanished)}
    order = np.lexsort((keys, -np.abs(w1 - w0)))  # biggest first; ties by pair
    listed = {
        kind: [
            _change(names, labels, int(keys[k]), (c0[k], l0[k]), (c1[k], l1[k]))
            for k in order[mask[order]][:limit]
        ]
        for kind, mask in kinds.items()
    }
    totals = {kind: int(mask.sum()) for kind, mask in kinds.items()}
    return LinkDifference(listed["appeared"], listed["vanished"], listed["changed"], totals)


def _in_names_of(before: Links, after: Links) -> tuple[list[str], list[str], Links]:
    """`before`'s links keyed by `after`'s concept indices, and the names and labels of
    those (after's, then those only `before` has: a diff back in time, or across an
    erasure)."""
    if after.names[: len(before.names)] == before.names:  # `after` folded on from `before`
        return after.names, after.labels, before
    names, labels = list(after.names), list(after.labels)
    index = {name: n for n, name in enumerate(names)}
    into = np.empty(len(before.names), dtype=np.int64)
    for n, name in enumerate(before.names):
        into[n] = index.setdefault(name, len(names))
        if into[n] == len(names):
            names.append(name)
            labels.append(before.labels[n])
    first, second = into[before.keys >> SHIFT], into[before.keys & LOW]
    keys = (np.minimum(first, second) << SHIFT) | np.maximum(first, second)
    order = np.argsort(keys)
    moved = Links(names, labels, keys[order], before.counts[order], before.learned[order])
    return names, labels, moved


def _keyed(
    names: list[str],
    labels: list[str],
    written: np.ndarray,
    counts: np.ndarray,
    taught: np.ndarray,
    deltas: np.ndarray,
) -> Links:
    keys = _union(written, taught)
    merged_counts = np.zeros(len(keys), dtype=np.int64)
    merged_counts[np.searchsorted(keys, written)] = counts
    learned = np.zeros(len(keys), dtype=np.float64)
    learned[np.searchsorted(keys, taught)] = deltas
    return Links(names, labels, keys, merged_counts, learned)


def _union(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The ascending distinct keys of both (each already ascending, or nearly). np.union1d
    hashed them (numpy 2.4): 1 s per call at 50,000 notes, 3.1 of a diff's 3.8 s; a
    stable sort of keys in order is a merge."""
    keys = np.sort(np.concatenate((first, second)), kind="stable")
    if len(keys) > 1:
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    return keys


def _at(links: Links, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts and deltas of `links` at `keys` (0 where it has none)."""
    counts = np.zeros(len(keys), dtype=np.int64)
    learned = np.zeros(len(keys), dtype=np.float64)
    if len(links.keys):
        at = np.minimum(np.searchsorted(links.keys, keys), len(links.keys) - 1)
        found = links.keys[at] == keys
        counts[found] = links.counts[at[found]]
        learned[found] = links.learned[at[found]]
    return counts, learned


def _change(
    names: list[str],
    labels: list[str],
    key: int,
    before: tuple[np.int64, np.float64],
    after: tuple[np.int64, np.float64],
) -> LinkChangeBetween:
    i, j = sorted((key >> int(SHIFT), key & int(LOW)), key=names.__getitem__)
    return LinkChangeBetween(
        labels[i],
        labels[j],
        names[i],
        names[j],
        (int(before[0]), float(before[1])),
        (int(after[0]), float(after[1])),
    )
