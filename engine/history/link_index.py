"""Where a link's history is in the log, read off a folded state instead of the whole log.

A link's history (engine/history/audit.py) needs the notes naming both its concepts, the notes
that ratings of it name, and the events of other types that may move a link (ratings,
consolidations, documents). A state knows the first two: every note is a memory row, its
id is its position and the postings name its concepts. The fold keeps the positions of the
third (`State.link_events`), so an audit fetches those entries by position and reads only
the log after the state, where a whole read of a million entries took most of its time.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from assocmem.engine.position import Position, Positions
from assocmem.engine.recall.match import near_misses
from assocmem.engine.state.state import State


@dataclasses.dataclass(frozen=True, slots=True)
class LinkIndex:
    """What a state folded up to `position` tells of a link's history up to there."""

    position: Position
    together: tuple[Position, ...]
    """Ascending: the notes naming both concepts."""
    events: Positions
    """A copy of `State.link_events`: kept as numbers until `positions` is asked for, which
    a caller does only if it fetches them (a log of ratings mostly is read whole instead)."""
    surfaces: tuple[dict[str, int], dict[str, int]]
    """The words written for each concept up to `position`, in the state's order."""
    labels: tuple[str, str]
    unknown: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """Each of the two concepts the state has never seen, with the labels of the known
    concepts nearest to it (engine/recall/match.py): most often, a name the caller mistyped."""

    def covers(self, position: Position) -> bool:
        return position <= self.position

    def __len__(self) -> int:
        return len(self.together) + len(self.events)

    @property
    def positions(self) -> tuple[Position, ...]:
        """Ascending: the notes naming both concepts and every link event."""
        return tuple(sorted([*self.together, *self.events]))  # two runs, no position twice


def link_index(state: State, source: str, target: str) -> LinkIndex:
    """The index of the link source -- target in `state` (copied: the state may fold on)."""
    at = [state.concept_index.get(source), state.concept_index.get(target)]
    together: list[Position] = []
    if at[0] is not None and at[1] is not None:
        rows = np.intersect1d(state.postings.of(at[0])[0], state.postings.of(at[1])[0])
        together = [Position.parse(state.rows.id_of(row)) for row in rows.tolist()]
    return LinkIndex(
        state.position,
        tuple(together),
        state.link_events.copy(),
        (_surfaces(state, at[0]), _surfaces(state, at[1])),
        (state.label(source), state.label(target)),
        {c: _nearest(state, c) for c in (source, target) if c not in state.concept_index},
    )


def _nearest(state: State, concept: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(state.label(m.name) for m in near_misses(state, concept)))


def _surfaces(state: State, index: int | None) -> dict[str, int]:
    return {} if index is None else dict(state.surfaces[index])


def rated_positions(index: LinkIndex, rated: frozenset[str]) -> list[Position]:
    """The rated notes up to the index's state that it does not name already (notes naming
    one concept, held because a rating of the link names them): their ids are positions."""
    named = set(index.positions)
    found = []
    for memory_id in rated:
        try:
            position = Position.parse(memory_id)
        except ValueError:  # not an id the log gave: no note to fetch
            continue
        if index.covers(position) and position not in named:
            found.append(position)
    return sorted(found)
