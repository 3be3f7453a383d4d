"""Episodic context: the memory written just after a strong match (or just before it, when
the two share a key concept), in the same stream (the same agent, user, session and
namespace, within CONTEXT_GAP), is associated with it: association by contiguity, the
oldest law of episodic memory. In a conversation or a work session the next turn or step
(the reply, the outcome) often holds the answer while sharing no word with the question.

A neighbour is scored from its match: the match's score times FOLLOWING_SHARE (written
after it) or PRECEDING_SHARE (before it), RELATED times that when the two share a key
concept, moved by what ratings of it taught their link (`taught_share`). So the read
itself decides how much room context gets: a neighbour enters the list only past memories
that matched less than that share of the strong match, and a read whose direct matches
are close together leaves it none."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from assocmem.engine.state.state import State
from assocmem.engine.state.stream import beside, share_a_concept

FOLLOWING_SHARE = 0.5
"""A following memory's score, as a share of the match it follows."""
PRECEDING_SHARE = 0.25
"""A preceding memory's score, as a share of the match it precedes: weaker backwards."""
RELATED = 1.4
"""How much larger either share is when the neighbour carries a key concept of its match:
contiguity and similarity together. The next turn on the same subject is likelier the
answer than a note on another that happened to be written next."""
ANCHORS = 2
"""The strongest matches whose neighbours a read brings."""
CLEAR = 1.01
"""How much better than the first memory after them the anchors must score: a read whose
best matches tie with the next one has no strong match to follow."""


@dataclasses.dataclass(frozen=True, slots=True)
class Neighbour:
    row: int
    score: float
    anchor: int
    """The row of the match it was written beside."""
    after: bool
    """Written after the match (else before it)."""
    taught: float = 0.0
    """The learned delta of the link from the match to it (ratings of it for questions
    the match answered: engine/events/feedback_given.py)."""


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
            near = beside(state, row, after)
            if near is None:
                continue
            taught = state.memory_links.get((row, near), (0.0, None))[0]
            related = share_a_concept(state, row, near)
            if not (after or taught > 0 or related):
                continue
            if allowed(np.array([near], dtype=np.int64))[0]:
                untaught = share * RELATED if related else share
                found.append(
                    Neighbour(near, score * taught_share(untaught, taught), row, after, taught)
                )
    return found


def taught_share(share: float, taught: float) -> float:
    """A neighbour's share of its match's score once ratings taught their link `taught`
    (0 or more): each helpful rating takes it part of the way to the match's own score, and
    an unhelpful one takes a helpful one's part back (engine/state/stream.py)."""
    return share + (1.0 - share) * taught / (1.0 + taught)
