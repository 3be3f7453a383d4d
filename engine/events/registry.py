"""The event types the fold knows, by name: the built-in records, and any a test adds."""

from __future__ import annotations

from assocmem.engine.errors import UnknownEventType
from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.document_ingested import DOCUMENT_INGESTED
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.importance_set import IMPORTANCE_SET
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.events.memory_accessed import MEMORY_ACCESSED
from assocmem.engine.events.memory_deleted import MEMORY_DELETED
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.record import EventType
from assocmem.engine.events.subject_forgotten import SUBJECT_FORGOTTEN

BUILT_IN = (
    MEMORY_WRITTEN,
    ACTIVITY_LOGGED,
    DOCUMENT_INGESTED,
    FEEDBACK_GIVEN,
    MEMORY_ACCESSED,
    IMPORTANCE_SET,
    LINKS_CONSOLIDATED,
    SUBJECT_FORGOTTEN,
    MEMORY_DELETED,
)

_REGISTRY: dict[str, EventType] = {record.name: record for record in BUILT_IN}


def register(event_type: EventType) -> EventType:
    existing = _REGISTRY.get(event_type.name)
    if existing is not None and existing is not event_type:
        raise ValueError(f"event type {event_type.name!r} is registered already")
    _REGISTRY[event_type.name] = event_type
    return event_type


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def event_type(name: str) -> EventType:
    found = _REGISTRY.get(name)
    if found is None:
        raise UnknownEventType(
            f"event type {name!r} is unknown: expected one of {sorted(_REGISTRY)}"
        )
    return found
