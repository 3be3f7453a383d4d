"""subject.forgotten: someone asked to erase every event of a user, an agent, a session or a
namespace of the tenant. The erasure job rewrites the log, the archive and the snapshots
without them; this event stays as the record of the request, naming the subject only by
the SHA-256 of its id (the id itself is what was to be forgotten)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event

KINDS = ("user", "agent", "session", "namespace")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def build(kind: str, digest: str) -> Payload:
    return {"kind": kind, "digest": digest}


def check(data: Payload) -> None:
    if data.get("kind") not in KINDS:
        raise InvalidEvent(f"kind {quoted(data.get('kind'))} is invalid: expected one of {KINDS}")
    digest = data.get("digest")
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise InvalidEvent(f"digest {quoted(digest)} is invalid: expected 64 hex digits")


def apply(state: State, event: Event) -> None:
    """Nothing to fold: the erasure job takes the subject's events out of the log itself."""


SUBJECT_FORGOTTEN = EventType("subject.forgotten", 1, check, apply, build, moves_links=False)
