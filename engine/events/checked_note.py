"""A note's envelope decoded and checked in one pass of msgspec's decoder.

The fold checks every event again, since anything may have been added to the stream.
For the memory.written and activity.logged envelopes our own writers make, by far the
most common events, msgspec decodes the JSON straight into the types of their payload
rule (engine/events/note_payload.py) and the rest of the rule is checked after, without
an Event or a dict of each payload (the gain is in bench/README.md, measured with
bench/worker_fold.py).

It only ever says yes. Another type or version, an envelope laid out otherwise, or one it
refuses for any reason: `None`, and the event goes the ordinary way (`decode_event`'s
JSON, then its type's check at the fold, with the same rule), which decides and says why
it refuses. So it changes no answer; tests/unit/engine/events/test_checked_note.py holds
it to that, envelope by envelope.
"""

from __future__ import annotations

import msgspec

from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.note_payload import (
    Activity,
    ColumnNote,
    Envelope,
    Written,
    column_note,
)
from assocmem.engine.events.payload import in_time
from assocmem.engine.position import Position

VERSIONS = {record.name: record.version for record in (MEMORY_WRITTEN, ACTIVITY_LOGGED)}
"""The versions of the notes this decoder reads at once: older ones take the upcasting path."""


def _decoder(name: str, payload: type) -> tuple[bytes, str, msgspec.json.Decoder]:
    """How `encode_event` starts the envelope of `name`, and its decoder."""
    prefix = f'{{"v":{VERSIONS[name]},"type":"{name}",'.encode()
    return prefix, name, msgspec.json.Decoder(Envelope[payload])  # type: ignore[valid-type]


_WRITTEN = _decoder("memory.written", Written)
_ACTIVITY = _decoder("activity.logged", Activity)
"""An envelope that starts otherwise is left to the ordinary way, which is how a write of
another version or type costs no failed attempt here."""


def checked_note(
    raw: bytes, position: Position, concept_index: dict[str, int]
) -> ColumnNote | None:
    """The memory.written or activity.logged event in `raw`, checked and ready to stage
    into the state of `concept_index`, if it is one that this decoder is sure of; None
    otherwise."""
    if raw.startswith(_WRITTEN[0]):
        _, name, decoder = _WRITTEN
    elif raw.startswith(_ACTIVITY[0]):
        _, name, decoder = _ACTIVITY
    else:
        return None
    try:
        envelope = decoder.decode(raw)
    except msgspec.DecodeError:  # validation errors too
        return None
    if envelope.type != name or envelope.v != VERSIONS[name]:  # a key given twice
        return None
    if not in_time(envelope.ts):
        return None
    return column_note(name, position, envelope, concept_index)
