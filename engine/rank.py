"""Ranking: relevance x importance-aware time decay x importance x valence x accesses.

Decay never goes below DECAY_FLOOR, so relevance decides between an old
memory that matches and a new one that does not; among memories that match
alike, the newer, more important, better rated and more used one wins.
"""

from __future__ import annotations

import numpy as np

from .state import IMPORTANT, SUPPLEMENT, State

STAGE_BANDS = {
    "direct": (0.36, 1.0),
    "fuzzy": (0.3, 0.5),
    "association": (0.0, 0.3),
    "chain": (0.0, 0.18),
    "time": (0.0, 0.1),
}
"""Relevance range of each stage: direct > fuzzy > association > chain > time only, each
scaled within its band by match quality or link strength."""
TIER_WEIGHTS = np.array([1.0, 0.85, 0.6])
"""Core, important, supplement (indexed by tier): a supplement match verifies more than it finds."""
assert TIER_WEIGHTS[SUPPLEMENT] < TIER_WEIGHTS[IMPORTANT]
DECAY_FLOOR = 0.6
HALF_LIFE_DAYS = 30.0
"""Half-life of the decaying part for importance 1; each importance step doubles it."""
BM25_K1, BM25_B = 1.2, 0.3
"""A low b: long memories carry more words by nature and should not be pushed down for it."""
DAY = 86_400.0


def idf(state: State, concept: int) -> float:
    """BM25's inverse document frequency of a concept over the memories."""
    n, df = len(state.rows), state.postings.size(concept)
    return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))


def mean_length(state: State) -> float:
    """Mean length of all memories; lengths are set once per memory, so it is kept per size."""
    size = len(state.rows)
    cached = state.derived.get("mean_length")
    if cached is None or cached[0] != size:  # type: ignore[index]
        mean = float(state.length.values.mean()) if size else 1.0
        cached = state.derived["mean_length"] = (size, mean)
    return cached[1]  # type: ignore[index,no-any-return]


def length_norm(state: State, rows: np.ndarray, average: float) -> np.ndarray:
    """BM25's length normalisation (term frequency 1), scaled so a one-concept memory scores 1.

    `average` is the mean length over all memories (the caller computes it once per read)."""
    lengths = state.length.values[rows].astype(np.float64)
    norm = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * lengths / average))
    best = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B / average))
    return norm / best


def factors(state: State, rows: np.ndarray, now: float) -> np.ndarray:
    """Everything but relevance, per memory row."""
    importance = state.importance.values[rows].astype(np.float64)
    age_days = np.maximum(now - state.ts.values[rows], 0.0) / DAY
    half_life = HALF_LIFE_DAYS * 2.0 ** (importance - 1)
    decay = DECAY_FLOOR + (1 - DECAY_FLOOR) * 0.5 ** (age_days / half_life)
    valence = 1.0 + 0.5 * state.valence.values[rows].astype(np.float64)
    accesses = 1.0 + 0.1 * np.log1p(np.minimum(state.accesses.values[rows], 1000))
    return decay * (0.6 + 0.1 * importance) * valence * accesses


def top(rows: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (row, score), best first; among equal scores the newest row first."""
    if len(rows) > 4 * limit:
        keep = np.argpartition(-scores, 4 * limit)[: 4 * limit]
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((-rows, -np.round(scores, 9)))[:limit]
    return [(int(rows[n]), float(scores[n])) for n in order]
