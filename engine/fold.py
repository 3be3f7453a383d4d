"""The fold: applies events to a state, one small handler per event type.

Deterministic and free of I/O. An event at or before the state's position is a
duplicate and is skipped; an event that cannot be applied is returned as a
rejection (for the dead-letter stream) and the fold goes on past it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from .errors import InvalidEvent
from .event import (
    ACTIVITY_LOGGED,
    DOCUMENT_INGESTED,
    FEEDBACK_GIVEN,
    IMPORTANCE_SET,
    MEMORY_ACCESSED,
    MEMORY_WRITTEN,
    Event,
)
from .payload import validate_payload
from .position import is_after
from .state import Memory, State

LINK_WINDOW = 8
"""A memory links each concept to the next LINK_WINDOW - 1 in its list: all pairs for short
notes, linear (not quadratic) growth for long text."""
LINKED_CONCEPTS = 24
"""A memory's strongest concepts (core first) that make links: long text links its key terms,
not its 150 words."""
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
    _add_memory(state, event, "memory", None)
    for old in event.data.get("supersedes", []):
        if old in state.memories and old != event.position:
            state.supersede(state.memories[old], event.position)


def _activity_logged(state: State, event: Event) -> None:
    data = event.data
    meta = {"category": data["category"], "tags": data["tags"], "source": data.get("source")}
    _add_memory(state, event, "activity", meta)


def _add_memory(state: State, event: Event, kind: str, meta: dict[str, object] | None) -> None:
    data = event.data
    concepts = tuple(data["concepts"])
    core, matched = data.get("tiers") or (len(concepts), len(concepts))
    memory = Memory(
        id=event.position,
        text=data["text"],
        concepts=concepts,
        agent=event.agent,
        user=event.user,
        ts=event.ts,
        importance=data["importance"],
        core=core,
        matched=matched,
        kind=kind,
        meta=meta,
    )
    indices = state.add_memory(memory)
    # Supplement terms only verify a match; they make no links.
    state.counts.add_window(
        indices[: min(matched, LINKED_CONCEPTS)], LINK_WINDOW, len(state.concepts)
    )


def _document_ingested(state: State, event: Event) -> None:
    for unit in event.data["units"]:
        indices = [state.intern(c) for c in unit]
        state.counts.add_window(indices, LINK_WINDOW, len(state.concepts))
    state.documents += 1


def _memory_accessed(state: State, event: Event) -> None:
    for mid, hits in zip(event.data["memory_ids"], event.data["hits"], strict=True):
        memory = state.memories.get(mid)
        if memory is not None:
            state.add_accesses(memory, hits)


def _importance_set(state: State, event: Event) -> None:
    memory = state.memories.get(event.data["memory_id"])
    if memory is None:
        raise InvalidEvent(f"memory_id {event.data['memory_id']!r} is unknown")
    state.set_importance(memory, event.data["importance"])


def _feedback_given(state: State, event: Event) -> None:
    outcome = float(event.data["outcome"])
    memories = [state.memories[m] for m in event.data["memory_ids"] if m in state.memories]
    query = [state.intern(c) for c in event.data["concepts"]]
    targets = {state.intern(c) for memory in memories for c in memory.concepts[: memory.core]}
    moved: set[tuple[int, int]] = set()
    for q in query:
        for t in sorted(targets):
            key = (min(q, t), max(q, t))
            if q == t or key in moved:
                continue
            moved.add(key)
            learned = state.learned.get(q, {}).get(t, 0.0)
            floor = -float(state.counts.count(q, t))
            state.set_learned(q, t, max(learned + outcome, floor), event.position)
    for memory in memories:
        state.set_valence(memory, memory.valence + VALENCE_RATE * (outcome - memory.valence))


_HANDLERS: dict[str, Callable[[State, Event], None]] = {
    MEMORY_WRITTEN: _memory_written,
    FEEDBACK_GIVEN: _feedback_given,
    MEMORY_ACCESSED: _memory_accessed,
    IMPORTANCE_SET: _importance_set,
    ACTIVITY_LOGGED: _activity_logged,
    DOCUMENT_INGESTED: _document_ingested,
}
