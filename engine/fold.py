"""The fold: applies events to a state, one small handler per event type.

Deterministic and free of I/O. An event at or before the state's position is a
duplicate and is skipped; an event that cannot be applied is returned as a
rejection (for the dead-letter stream) and the fold goes on past it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

from .errors import InvalidEvent
from .event import FEEDBACK_GIVEN, MEMORY_WRITTEN, Event
from .payload import validate_payload
from .position import is_after
from .state import Memory, State

LINK_WINDOW = 8
"""A memory links each concept to the next LINK_WINDOW - 1 in its list: all pairs for short
notes, linear (not quadratic) growth for long text."""
VALENCE_RATE = 0.5
"""How far one feedback moves a memory's valence toward its outcome (0-1)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    position: str
    reason: str


def fold(state: State, events: Iterable[Event]) -> list[Rejection]:
    """Apply `events` (in log order) to `state` in place; return what was rejected."""
    rejections: list[Rejection] = []
    for event in events:
        if not is_after(event.position, state.position):
            continue
        try:
            validate_payload(event.type, event.data)
            _HANDLERS[event.type](state, event)
        except InvalidEvent as exc:
            rejections.append(Rejection(event.position, str(exc)))
        state.position = event.position
    return rejections


def fold_from_zero(events: Iterable[Event]) -> State:
    state = State()
    fold(state, events)
    return state


def _memory_written(state: State, event: Event) -> None:
    data = event.data
    memory = Memory(
        id=event.position,
        text=data["text"],
        concepts=tuple(data["concepts"]),
        agent=event.agent,
        user=event.user,
        ts=event.ts,
        importance=data["importance"],
    )
    state.memories[memory.id] = memory
    indices = [state.intern(c) for c in memory.concepts]
    for index in indices:
        state.postings.setdefault(index, []).append(memory.id)
    state.add_counts(windowed_pairs(indices, LINK_WINDOW), event.position)


def windowed_pairs(items: list[int], window: int) -> Iterator[tuple[int, int]]:
    for n, first in enumerate(items):
        for second in items[n + 1 : n + window]:
            yield first, second


def _feedback_given(state: State, event: Event) -> None:
    outcome = float(event.data["outcome"])
    memories = [state.memories[m] for m in event.data["memory_ids"] if m in state.memories]
    query = [state.intern(c) for c in event.data["concepts"]]
    targets = {state.intern(c) for memory in memories for c in memory.concepts}
    moved: set[tuple[int, int]] = set()
    for q in query:
        for t in sorted(targets):
            key = (min(q, t), max(q, t))
            if q == t or key in moved:
                continue
            moved.add(key)
            link = state.link(q, t)
            state.set_learned(q, t, max(link.learned + outcome, -float(link.count)), event.position)
    for memory in memories:
        memory.valence += VALENCE_RATE * (outcome - memory.valence)


_HANDLERS: dict[str, Callable[[State, Event], None]] = {
    MEMORY_WRITTEN: _memory_written,
    FEEDBACK_GIVEN: _feedback_given,
}
