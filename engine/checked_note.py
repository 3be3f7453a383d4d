"""A note's envelope decoded and checked in one pass of msgspec's decoder.

The fold checks every event again, since anything may have been added to the stream.
For the memory.written envelopes our own writers make, by far the most common event,
msgspec decodes the JSON straight into typed fields with their limits (types, lengths,
ranges), and what types cannot say (blank text, a repeated concept, a concept with
space around it, tiers in order, labels of the note's own concepts, the time) is checked
after. A fold of commit messages went from 28,600 to 33,200 notes a second so
(bench/worker_fold.py, medians of 5 alternating runs): 30 microseconds a note, not 35.

It only ever says yes. Another type or version, a field it does not know, an envelope
laid out otherwise, or one it refuses for any reason: `None`, and the event goes the
ordinary way (`decode_event`'s JSON, then the type's check at the fold), which decides
and says why it refuses. So it changes no answer; tests/unit/engine/test_checked_note.py
holds it to that, envelope by envelope.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .concept import MAX_CONCEPT_LENGTH
from .event import LAST_TIME, Event
from .payload import MAX_CONCEPTS, MAX_SUPERSEDES, MAX_TEXT_LENGTH
from .position import Position

VERSION = 2
"""memory.written's version (checked against its record when the tests run)."""
PREFIX = b'{"v":2,"type":"memory.written",'
"""How `encode_event` starts a note's envelope: anything else is left to the ordinary way,
which is how a write of another version or type costs no failed attempt here."""

_Concept = Annotated[str, Meta(min_length=1, max_length=MAX_CONCEPT_LENGTH)]


class _Note(Struct, forbid_unknown_fields=True):
    """memory.written's payload as `memory_written.build` makes it: every field but
    `supersedes` always written, so a decoded one has the same keys as the JSON."""

    text: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_LENGTH)]
    concepts: Annotated[list[_Concept], Meta(max_length=MAX_CONCEPTS)]
    tiers: Annotated[list[int], Meta(min_length=2, max_length=2)] | None
    labels: dict[str, _Concept]
    importance: Annotated[int, Meta(ge=1, le=5)]
    extractor: str
    supersedes: (
        Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=MAX_SUPERSEDES)]
        | UnsetType
    ) = UNSET


class _Envelope(Struct, forbid_unknown_fields=True):
    v: int
    type: str
    tenant: str
    agent: str
    user: str | None
    ts: float
    key: str | None
    data: _Note
    session: str | None = None
    namespace: str | None = None


_decode = msgspec.json.Decoder(_Envelope).decode


def checked_note(raw: bytes, position: Position) -> Event | None:
    """The memory.written event in `raw`, marked `checked` (its type's check would pass),
    if it is one that this decoder is sure of; None otherwise."""
    if not raw.startswith(PREFIX):
        return None
    try:
        envelope = _decode(raw)
    except msgspec.DecodeError:  # validation errors too
        return None
    note = envelope.data
    if envelope.type != "memory.written" or envelope.v != VERSION:  # a key given twice
        return None
    if not (0 <= envelope.ts <= LAST_TIME and _sound(note)):
        return None
    data = {
        "text": note.text,
        "concepts": note.concepts,
        "tiers": note.tiers,
        "labels": note.labels,
        "importance": note.importance,
        "extractor": note.extractor,
    }
    if note.supersedes is not UNSET:
        data["supersedes"] = note.supersedes
    return Event(
        envelope.type,
        envelope.tenant,
        envelope.agent,
        envelope.ts,
        data,
        envelope.user,
        envelope.key,
        VERSION,
        envelope.session,
        envelope.namespace,
        position,
        checked=True,
    )


def _sound(note: _Note) -> bool:
    """What the payload's types do not say and `memory_written.check` asks."""
    concepts = note.concepts
    distinct = set(concepts)
    if len(distinct) != len(concepts) or not note.text.strip():
        return False
    joined = "".join(concepts)
    if joined.split() != [joined] and any(c != c.strip() for c in concepts):
        return False  # space inside a concept (a phrase) is fine, around it is not
    tiers = note.tiers
    if tiers is not None and not 0 <= tiers[0] <= tiers[1] <= len(concepts):
        return False
    return note.labels.keys() <= distinct
