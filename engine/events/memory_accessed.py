"""memory.accessed: how many times reads returned each memory since the last such event
(appended in batches off the read's path); a small prior in later reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.payload import check_ids
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event

MAX_ACCESS_IDS = 10_000
"""Memories named by one memory.accessed event."""


def build(hits: dict[str, int]) -> Payload:
    ids = sorted(hits)
    return {"memory_ids": ids, "hits": [hits[i] for i in ids]}


def check(data: Payload) -> None:
    ids, hits = data.get("memory_ids"), data.get("hits")
    check_ids(ids, "memory_ids", MAX_ACCESS_IDS)
    if not ids:
        raise InvalidEvent(f"memory_ids has 0 items: expected 1 to {MAX_ACCESS_IDS}")
    if (
        not isinstance(hits, list)
        or len(hits) != len(ids)
        or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hits)
    ):
        raise InvalidEvent(
            f"hits {quoted(hits)} is invalid: expected one count of 1 or more per id"
        )


def apply(state: State, event: Event) -> None:
    for mid, hits in zip(event.data["memory_ids"], event.data["hits"], strict=True):
        memory = state.memories.get(mid)
        if memory is not None:
            state.add_accesses(memory, hits)


MEMORY_ACCESSED = EventType(
    "memory.accessed", 1, check, apply, build, keeps_staged=True, moves_links=False
)
