"""Episodic context: the memory written just after a strong match (or just before it, when
the two share a key concept), in the same stream (the same agent, user, session and
namespace, within CONTEXT_GAP), is associated with it: association by contiguity, the
oldest law of episodic memory. In a conversation or a work session the next turn or step
(the reply, the outcome) often holds the answer while sharing no word with the question.

A neighbour is scored from its match: the match's score times FOLLOWING_SHARE (written
after it) or PRECEDING_SHARE (before it). So the read itself decides how much room context
gets: a neighbour enters the list only past memories that matched less than that share of
the strong match, and a read whose direct matches are close together leaves it none."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from assocmem.engine.state.state import State

CONTEXT_GAP = 3600.0
"""Seconds between two memories of one stream that still follow each other."""
FOLLOWING_SHARE = 0.5
"""A following memory's score, as a share of the match it follows."""
PRECEDING_SHARE = 0.25
"""A preceding memory's score, as a share of the match it precedes: weaker backwards."""
ANCHORS = 2
"""The strongest matches whose neighbours a read brings."""
CLEAR = 1.01
"""How much better than the first memory after them the anchors must score: a read whose
best matches tie with the next one has no strong match to follow."""
SCAN = 32
"""Rows looked through on either side of a match for its stream's neighbour."""


@dataclasses.dataclass(frozen=True, slots=True)
class Neighbour:
    row: int
    score: float
    anchor: int
    """The row of the match it was written beside."""
    after: bool
    """Written after the match (else before it)."""


def neighbours(
    state: State,
    ranked: list[tuple[int, float]],
    matched: list[bool],
    allowed: Callable[[np.ndarray], np.ndarray],
) -> list[Neighbour]:
    """The stream neighbours of the matches among the first ANCHORS of `ranked` (row,
    score; best first; `matched`: which of them carry a query concept or a near miss of
    one, not only linked concepts) that stand out from the rest, which `allowed` (rows ->
    bool mask: alive, visible, of a kind asked for) lets a read return."""
    found = []
    bar = ranked[ANCHORS][1] * CLEAR if len(ranked) > ANCHORS else 0.0
    for (row, score), is_match in zip(ranked[:ANCHORS], matched, strict=False):
        if score <= bar:
            break
        if not is_match:
            continue
        for after, share in ((True, FOLLOWING_SHARE), (False, PRECEDING_SHARE)):
            near = _beside(state, row, after)
            if (
                near is not None
                and (after or _share_a_concept(state, row, near))
                and allowed(np.array([near], dtype=np.int64))[0]
            ):
                found.append(Neighbour(near, score * share, row, after))
    return found


def _share_a_concept(state: State, row: int, other: int) -> bool:
    """Whether the two memories carry a key concept in common (core or important: what
    their links are counted from). What follows a match is its reply or its outcome, which
    may share no word with it; what precedes it comes only if it is about the same thing,
    as the turn a reply answers mostly is, and an unrelated note written before is not."""
    return not set(state.rows.linked(row, SCAN)).isdisjoint(state.rows.linked(other, SCAN))


def _beside(state: State, row: int, after: bool) -> int | None:
    """The row of the next (or previous) memory of `row`'s stream within CONTEXT_GAP."""
    ts, rows = state.ts.values, state.rows
    mine = rows.stream(row)
    step = 1 if after else -1
    for near in range(row + step, row + step * (SCAN + 1), step):
        if not 0 <= near < len(rows) or abs(ts[near] - ts[row]) > CONTEXT_GAP:
            return None
        if rows.stream(near) == mine:
            return near
    return None
