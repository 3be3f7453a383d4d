"""memory.deleted: a memory taken out of every read, listing and link.

The memory is hidden from reads (even those that ask for superseded versions), from
listings and from a fetch by id; the links its concepts wrote are taken off the counts, as
if it had never been written; it is no longer recounted by consolidation. Its text stays in
the log until an erasure takes the write out for real (`DELETE ...?erase=true`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.events.payload import check_ids
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(memory_id: str) -> Payload:
    return {"memory_id": memory_id}


def check(data: Payload) -> None:
    check_ids([data.get("memory_id")], "memory_id", 1)


def apply(state: State, event: Event) -> None:
    """Deleting a memory twice, or one an erasure took out of the log since, changes nothing."""
    assert event.position is not None
    memory = state.memories.get(event.data["memory_id"])
    if memory is not None and memory.row not in state.deleted:
        state.delete_row(memory.row, event.position)


MEMORY_DELETED = EventType("memory.deleted", 1, check, apply, build)
