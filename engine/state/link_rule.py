"""The one rule of a link, for every part that weighs or follows links: a link's weight is
its written count plus its learned delta, never below zero; a read follows a written link
whose weight reaches the floor, and a taught link (positive learned delta) whatever the
floor. Works on numbers and on numpy arrays alike."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

N = TypeVar("N", float, np.ndarray)


def link_weight(count: N, learned: N) -> N:
    return np.maximum(count + learned, 0.0)  # type: ignore[return-value]


def is_followed(count: N, learned: N, floor: float) -> N:
    weight = count + learned
    return (weight >= floor) | ((learned > 0) & (weight > 0))  # type: ignore[return-value]


def is_taught(learned: float) -> bool:
    return learned > 0


def row_links(
    counts: Any, learned: dict[int, dict[int, float]], i: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concept `i`'s links: its written row of `counts` (a Cooccurrence), and the links only
    taught, each with its count (float) and learned delta."""
    targets, written = counts.row(i)
    targets, written = targets.astype(np.int64), written.astype(np.float64)
    taught = learned.get(i, {})
    deltas = np.zeros(len(targets))
    if taught:
        at = {int(t): n for n, t in enumerate(targets)}
        extra = [j for j in taught if j not in at]
        targets = np.concatenate([targets, np.array(extra, dtype=np.int64)])
        written = np.concatenate([written, np.zeros(len(extra))])
        deltas = np.array([taught.get(int(j), 0.0) for j in targets])
    return targets, written, deltas
