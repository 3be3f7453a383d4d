"""memory.importance_set: a memory's importance (1-5) changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.payload import check_ids, check_importance
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(memory_id: str, importance: int) -> Payload:
    return {"memory_id": memory_id, "importance": importance}


def check(data: Payload) -> None:
    check_ids([data.get("memory_id")], "memory_id", 1)
    check_importance(data.get("importance"))


def apply(state: State, event: Event) -> None:
    memory = state.memories.get(event.data["memory_id"])
    if memory is None:
        raise InvalidEvent(f"memory_id {quoted(event.data['memory_id'])} is unknown")
    state.set_importance(memory, event.data["importance"])


IMPORTANCE_SET = EventType(
    "memory.importance_set", 1, check, apply, build, keeps_staged=True, moves_links=False
)
