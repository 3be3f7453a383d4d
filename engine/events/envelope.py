"""The event envelope: encoding, decoding and upcasting of old payload versions.

One envelope for every event (DESIGN.md, "Events"); the stream position is not
inside the payload: Redis assigns it and it is the event's identity.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.position import Position

if TYPE_CHECKING:
    from assocmem.engine.events.record import EventType


@dataclasses.dataclass(slots=True)
class Event:
    """Never changed once made (`dataclasses.replace` makes another), though not frozen: a
    frozen dataclass sets each field through `object.__setattr__`, four times slower, and
    the fold makes one for every entry it reads."""

    type: str
    tenant: str
    agent: str
    ts: float
    data: dict[str, Any]
    user: str | None = None
    key: str | None = None
    v: int = 0
    session: str | None = None
    namespace: str | None = None
    position: Position | None = None
    """Assigned by the log on append; None for an event not yet appended."""
    fingerprint: str | None = None
    """With a key: what the request said (not stored in the envelope). The same key sent
    again with another fingerprint is a conflict, not a retry."""

    def __post_init__(self) -> None:
        if self.v == 0:
            self.v = _event_type(self.type).version

    def at(self, position: Position) -> Event:
        """This event as the log appended it, at `position` (dataclasses.replace, without
        looking its fields up again for every event of a batch)."""
        return Event(
            self.type,
            self.tenant,
            self.agent,
            self.ts,
            self.data,
            self.user,
            self.key,
            self.v,
            self.session,
            self.namespace,
            position,
            self.fingerprint,
        )


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
    if event.session is not None:  # written when set: most events carry neither
        envelope["session"] = event.session
    if event.namespace is not None:
        envelope["namespace"] = event.namespace
    return orjson.dumps(envelope)


def decode_event(raw: bytes, position: Position) -> Event:
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
    record = _event_type(event_type)
    if version != record.version:
        data = record.upcast(version, data)
    return Event(
        event_type,
        tenant,
        agent,
        ts,
        data,
        _scope(envelope, "user", position),
        envelope.get("key"),
        record.version,
        _scope(envelope, "session", position),
        _scope(envelope, "namespace", position),
        position,
    )


def _scope(envelope: dict[str, Any], field: str, position: Position) -> str | None:
    value = envelope.get(field)
    if value is not None and not isinstance(value, str):
        raise InvalidEvent(f"event at {position} has a {field} of type {type(value).__name__}")
    return value


def upcast(event_type_name: str, version: int, data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """`data` of `version` as the current version of its event type."""
    record = _event_type(event_type_name)
    return record.upcast(version, data), record.version


def _event_type(name: str) -> EventType:
    return _lookup()(name)


@functools.cache
def _lookup() -> Callable[[str], EventType]:
    """`event_type`, imported once: the registry imports every record, and an import in
    a function called for every event decoded or made was a thirtieth of an append."""
    from assocmem.engine.events.registry import event_type

    return event_type
