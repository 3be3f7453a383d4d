"""Ranking's last step: the best first, and among equal scores the newest memory first."""

from __future__ import annotations

import numpy as np

from assocmem.engine.recall.rank import top


def test_among_many_equal_scores_the_newest_memories_come_first() -> None:
    """A cap gives many memories one score (engine/recall/dominance.py): however many tie
    for the last places, those places go to the newest of them."""
    rows = np.arange(1000)
    scores = np.full(1000, 0.25)
    scores[500] = 0.9
    best = top(rows, scores, 5)
    assert best == [(500, 0.9), (999, 0.25), (998, 0.25), (997, 0.25), (996, 0.25)]


def test_the_best_scores_come_first_whatever_their_rows() -> None:
    rng = np.random.default_rng(7)
    rows = rng.permutation(300)
    scores = rng.random(300)
    best = top(rows, scores, 10)
    assert [s for _, s in best] == sorted(scores.tolist(), reverse=True)[:10]
