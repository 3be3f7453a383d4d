"""Ranking: relevance first, then bounded priors (recency, importance, valence, accesses).

Each prior moves a score by a few per cent at most, so it orders memories that match
alike (the newer, more important, better rated, more used one first) and never buries a
clearly better match: a strong match from last year beats a weak one from last week. A
query that asks for recency ("latest", "recently", 最近) weighs recency more.
"""

from __future__ import annotations

import numpy as np

from assocmem.engine.state.memory import IMPORTANT, SUPPLEMENT
from assocmem.engine.state.state import State

TIER_WEIGHTS = np.array([1.0, 0.85, 0.6])
"""Core, important, supplement (indexed by tier): a supplement match verifies more than it finds."""
assert TIER_WEIGHTS[SUPPLEMENT] < TIER_WEIGHTS[IMPORTANT]
RECENCY_WEIGHT = 0.1
"""Share of its score the oldest memory loses to the newest, other things equal."""
RECENT_QUERY_RECENCY_WEIGHT = 0.5
"""The same, for a query that asks for the latest or most recent memories."""
HALF_LIFE_DAYS = 30.0
"""Half-life of recency for importance 1; each importance step doubles it."""
IMPORTANCE_WEIGHT = 0.025
"""Score change per importance step away from the default 3 (1-5: -5% to +5%)."""
VALENCE_WEIGHT = 0.05
"""Score change at valence 1 (or -1): feedback orders a rated memory among its matches."""
ACCESS_WEIGHT, ACCESS_CAP = 0.02, 0.05
"""Score gain per e-fold of reads that returned the memory, and its cap."""
BM25_K1, BM25_B = 1.2, 0.3
"""A low b: long memories carry more words by nature and should not be pushed down for it."""
DAY = 86_400.0


def idf(state: State, concept: int) -> float:
    """BM25's inverse document frequency of a concept over the memories."""
    n, df = len(state.rows), state.postings.size(concept)
    return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))


def length_norms(state: State) -> np.ndarray:
    """Per memory, BM25's length normalisation (term frequency 1), scaled so a one-concept
    memory gets 1. Lengths are set once per memory, so the array is kept per state size."""
    size = len(state.rows)
    cached = state.derived.get("length_norms")
    if cached is None or cached[0] != size:  # type: ignore[index]
        lengths = state.length.values.astype(np.float64)
        average = float(lengths.mean()) if size else 1.0
        norm = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * lengths / average))
        best = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B / average))
        cached = state.derived["length_norms"] = (size, norm / best)
    return cached[1]  # type: ignore[index,no-any-return]


PRIOR_LOW = (1 - RECENT_QUERY_RECENCY_WEIGHT) * (1 - 2 * IMPORTANCE_WEIGHT) * (1 - VALENCE_WEIGHT)
PRIOR_HIGH = (1 + 2 * IMPORTANCE_WEIGHT) * (1 + VALENCE_WEIGHT) * (1 + ACCESS_CAP)
"""Bounds of `priors`: a memory whose relevance is below PRIOR_LOW / PRIOR_HIGH of the
k-th best cannot reach the top k, whatever its priors."""


def priors(state: State, rows: np.ndarray, now: float, recency_weight: float) -> np.ndarray:
    """Everything but relevance, per memory row: a factor near 1."""
    importance = state.importance.values[rows].astype(np.float64)
    age_days = np.maximum(now - state.ts.values[rows], 0.0) / DAY
    half_life = HALF_LIFE_DAYS * 2.0 ** (importance - 1)
    recency = 1.0 - recency_weight * (1.0 - 0.5 ** (age_days / half_life))
    standing = 1.0 + IMPORTANCE_WEIGHT * (importance - 3)
    valence = 1.0 + VALENCE_WEIGHT * state.valence.values[rows].astype(np.float64)
    use = 1.0 + np.minimum(ACCESS_WEIGHT * np.log1p(state.accesses.values[rows]), ACCESS_CAP)
    return recency * standing * valence * use


def reach(relevance: np.ndarray, limit: int) -> float:
    """The relevance below which a memory cannot reach the top `limit` once priors apply,
    if each of these is a lower bound of a memory's relevance."""
    if len(relevance) <= limit:
        return -np.inf
    kth = -np.partition(-relevance, limit - 1)[limit - 1]
    return float(kth * PRIOR_LOW / PRIOR_HIGH)


def contenders(relevance: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the relevances that can still reach the top `limit` once priors apply."""
    if len(relevance) <= limit:
        return np.arange(len(relevance))
    return np.flatnonzero(relevance >= reach(relevance, limit))


def top(rows: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (row, score), best first; among equal scores the newest row first."""
    rounded = np.round(scores, 9)
    if len(rows) > 4 * limit:
        # every score tied with the limit-th stays: a cap gives many memories one score
        bar = -np.partition(-rounded, limit - 1)[limit - 1]
        keep = np.flatnonzero(rounded >= bar)
        rows, scores, rounded = rows[keep], scores[keep], rounded[keep]
    order = np.lexsort((-rows, -rounded))[:limit]
    return [(int(rows[n]), float(scores[n])) for n in order]
