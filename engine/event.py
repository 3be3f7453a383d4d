"""The event envelope: encoding, decoding and upcasting of old payload versions.

One envelope for every event (DESIGN.md, "Events"); the stream position is not
inside the payload: Redis assigns it and it is the event's identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import orjson

from .errors import InvalidEvent, UnknownEventType, UnsupportedVersion

MEMORY_WRITTEN = "memory.written"
FEEDBACK_GIVEN = "feedback.given"
MEMORY_ACCESSED = "memory.accessed"
IMPORTANCE_SET = "memory.importance_set"
ACTIVITY_LOGGED = "activity.logged"
DOCUMENT_INGESTED = "document.ingested"

CURRENT_VERSIONS: dict[str, int] = {
    MEMORY_WRITTEN: 1,
    FEEDBACK_GIVEN: 1,
    MEMORY_ACCESSED: 1,
    IMPORTANCE_SET: 1,
    ACTIVITY_LOGGED: 1,
    DOCUMENT_INGESTED: 1,
}
"""The schema version this code writes, per event type."""

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {}
"""(type, version) -> function turning that version's payload into version + 1."""


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    type: str
    tenant: str
    agent: str
    ts: float
    data: dict[str, Any]
    user: str | None = None
    key: str | None = None
    v: int = 0
    position: str = ""
    """Assigned by the log on append; empty for an event not yet appended."""

    def __post_init__(self) -> None:
        if self.v == 0:
            object.__setattr__(self, "v", CURRENT_VERSIONS.get(self.type, 1))


def encode_event(event: Event) -> bytes:
    envelope = {
        "v": event.v,
        "type": event.type,
        "tenant": event.tenant,
        "agent": event.agent,
        "user": event.user,
        "ts": event.ts,
        "key": event.key,
        "data": event.data,
    }
    return orjson.dumps(envelope)


def decode_event(raw: bytes, position: str) -> Event:
    """Decode one stored envelope and upcast its payload to the current version."""
    try:
        envelope = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidEvent(f"event at {position} is not JSON: {exc}") from exc
    if not isinstance(envelope, dict):
        raise InvalidEvent(f"event at {position} is {type(envelope).__name__}: expected an object")
    try:
        event_type = str(envelope["type"])
        version = int(envelope["v"])
        data = envelope["data"]
        ts = float(envelope["ts"])
        tenant, agent = str(envelope["tenant"]), str(envelope["agent"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidEvent(f"event at {position} lacks a valid envelope field: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidEvent(
            f"event at {position} has data of type {type(data).__name__}: expected an object"
        )
    data, version = upcast(event_type, version, data)
    return Event(
        type=event_type,
        tenant=tenant,
        agent=agent,
        ts=ts,
        data=data,
        user=envelope.get("user"),
        key=envelope.get("key"),
        v=version,
        position=position,
    )


def upcast(event_type: str, version: int, data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    current = CURRENT_VERSIONS.get(event_type)
    if current is None:
        raise UnknownEventType(
            f"event type {event_type!r} is unknown: expected one of {sorted(CURRENT_VERSIONS)}"
        )
    if version > current:
        raise UnsupportedVersion(
            f"{event_type} version {version} is newer than this code: expected at most {current}"
        )
    while version < current:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise UnsupportedVersion(
                f"{event_type} version {version} has no upcaster to {version + 1}"
            )
        data, version = step(data), version + 1
    return data, version
