"""Streams: the memories one agent writes in one scope (user, session, namespace), one
after another. The memory just before or after another in its stream, within CONTEXT_GAP,
is its neighbour: what episodic context follows at read time (engine/recall/context.py)
and what a rating of a neighbour teaches (engine/events/feedback_given.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.engine.state.state import State

CONTEXT_GAP = 3600.0
"""Seconds between two memories of one stream that still follow each other."""
SCAN = 32
"""Rows looked through on either side of a memory for its stream's neighbour."""


def beside(state: State, row: int, after: bool) -> int | None:
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


def share_a_concept(state: State, row: int, other: int) -> bool:
    """Whether the two memories carry a key concept in common (core or important: what
    their links are counted from)."""
    return not set(state.rows.linked(row, SCAN)).isdisjoint(state.rows.linked(other, SCAN))


LEAST_TAUGHT = 0.0
"""The lowest a taught memory-to-memory link goes: unhelpful ratings take back what helpful
ones taught, never the contiguity the log wrote. A neighbour that did not help one question
is no evidence that the two memories are unrelated for every other: unlearning their
contiguity (down to -1, until snapshot format 9) cost the questions no rating touched
recall, and gained the rated ones nothing (bench/README.md)."""


def taught(before: float, outcome: float) -> float:
    """A memory-to-memory link's learned delta after a rating of `outcome` (-1 to 1)."""
    return max(before + outcome, LEAST_TAUGHT)


def anchors_of(state: State, row: int, question: set[int]) -> list[tuple[int, bool]]:
    """The stream neighbours of `row` that carry a concept of `question` (concept indices):
    the matches a read would have brought `row` beside, each with whether `row` was written
    after it. A rating of `row` for that question teaches the link from each."""
    found = []
    for row_after in (True, False):
        anchor = beside(state, row, not row_after)
        if anchor is not None and not question.isdisjoint(state.rows.linked(anchor, SCAN)):
            found.append((anchor, row_after))
    return found
