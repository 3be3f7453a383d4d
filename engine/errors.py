"""Errors raised by the engine.

EngineError                  root of everything the engine raises
 +-- InvalidEvent            an event's envelope or payload is malformed
 |    +-- UnknownEventType   the event type has no handler
 |    +-- UnsupportedVersion the payload's schema version is newer than this code
 +-- CorruptSnapshot         snapshot bytes cannot be decoded into a state
 +-- InvalidQuery            a read or graph request is out of range
"""

from __future__ import annotations


class EngineError(Exception):
    """Root of every engine error."""


class InvalidEvent(EngineError):
    """An event's envelope or payload is malformed."""


class UnknownEventType(InvalidEvent):
    """The event type has no handler."""


class UnsupportedVersion(InvalidEvent):
    """The payload's schema version is newer than this code understands."""


class CorruptSnapshot(EngineError):
    """Snapshot bytes cannot be decoded into a state."""


class InvalidQuery(EngineError):
    """A read or graph request is out of range."""


QUOTED = 60
"""Characters of a bad value an error message quotes: a 10 MB value is not echoed back."""


def quoted(value: object) -> str:
    """`repr(value)`, cut to its first QUOTED characters."""
    try:
        text = repr(value)
    except RecursionError:  # a value nested a thousand deep: its start says enough
        return f"a {type(value).__name__} nested too deep to quote"
    return text if len(text) <= QUOTED else text[: QUOTED - 1] + "…"
