"""The one rule of a link, for every part that weighs or follows links: a link's weight is
its written count plus its learned delta, never below zero; a read follows a written link
whose weight reaches the floor, and a taught link (positive learned delta) whatever the
floor. Works on numbers and on numpy arrays alike."""

from __future__ import annotations

from typing import TypeVar

import numpy as np

N = TypeVar("N", float, np.ndarray)


def link_weight(count: N, learned: N) -> N:
    return np.maximum(count + learned, 0.0)  # type: ignore[return-value]


def is_followed(count: N, learned: N, floor: float) -> N:
    weight = count + learned
    return (weight >= floor) | ((learned > 0) & (weight > 0))  # type: ignore[return-value]


def is_taught(learned: float) -> bool:
    return learned > 0
