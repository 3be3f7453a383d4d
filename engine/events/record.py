"""One record per event type: its name and version, the rule its payload obeys, the
builder the application makes payloads with, the fold handler, and the upcasters that
turn older payload versions into the current one.

Adding an event type means writing its record (a module in engine/events/) and naming it
in engine/events/registry.py; the envelope, the fold, the log, audits and the dead
letters need nothing more.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from assocmem.engine.errors import UnsupportedVersion

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event
    from assocmem.engine.state.state import State

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]


@dataclasses.dataclass(frozen=True, slots=True)
class EventType:
    name: str
    """Past tense, dotted: "memory.written"."""
    version: int
    """The payload version this code writes."""
    check: Callable[[Payload], None]
    """Raise InvalidEvent, naming the field and value, unless the payload is valid."""
    apply: Callable[[State, Event], None]
    """The fold handler: apply a valid payload to the state, in place."""
    build: Callable[..., Payload]
    """Make a payload from plain values (the application's side)."""
    upcasters: Mapping[int, Upcaster] = dataclasses.field(default_factory=dict)
    """Version v -> a function turning a version-v payload into version v + 1."""
    keeps_staged: bool = False
    """The fold may apply it while notes are staged, not yet indexed: its handler stages
    notes (engine/events/note_payload.py), or reads only what a staged note has already
    (its id, concepts, pending counts) and changes memories only through the State's
    setters. The fold indexes a run of notes at once, and before an event of any other
    type."""
    is_row: bool = False
    """The fold keeps it as a memory row: a link audit finds it through the postings of
    its concepts, not in the log."""
    counts_concepts: bool = False
    """Its concepts are counted together (a note, an activity, a document): it moves a
    link only where it names both of the link's concepts."""
    names_concepts: bool = False
    """It concerns a link only when it names one of the link's concepts (the notes, and
    ratings, which name the question's concepts)."""
    moves_links: bool = True
    """It may change a link's weight. The fold keeps the positions of those that may and
    are not rows (`State.link_events`), so that an audit reads only those from the log."""

    def payload(self, **values: Any) -> Payload:
        """A checked payload: what the fold will accept (raises InvalidEvent otherwise)."""
        data = self.build(**values)
        self.check(data)
        return data

    def upcast(self, version: int, data: Payload) -> Payload:
        if version > self.version:
            raise UnsupportedVersion(
                f"{self.name} version {version} is newer than this code: expected at most {self.version}"
            )
        while version < self.version:
            step = self.upcasters.get(version)
            if step is None:
                raise UnsupportedVersion(
                    f"{self.name} version {version} has no upcaster to {version + 1}"
                )
            data, version = step(data), version + 1
        return data
