"""A note's envelope decoded and checked in one pass of msgspec's decoder.

The fold checks every event again, since anything may have been added to the stream.
For the memory.written and activity.logged envelopes our own writers make, by far the
most common events, msgspec decodes the JSON straight into typed fields with their
limits (types, lengths, ranges), and what types cannot say (blank text, a repeated
concept, a concept with space around it, tiers in order, labels of the note's own
concepts, blank activity labels, the time) is checked after, without a dict of each
payload (the gain is in bench/README.md, measured with bench/worker_fold.py).

It only ever says yes. Another type or version, a field it does not know, an envelope
laid out otherwise, or one it refuses for any reason: `None`, and the event goes the
ordinary way (`decode_event`'s JSON, then the type's check at the fold), which decides
and says why it refuses. So it changes no answer; tests/unit/engine/events/test_checked_note.py
holds it to that, envelope by envelope.
"""

from __future__ import annotations

from array import array
from typing import Annotated, Generic, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from assocmem.engine.concept import MAX_CONCEPT_LENGTH
from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.payload import (
    MAX_CONCEPTS,
    MAX_LABEL_LENGTH,
    MAX_SUPERSEDES,
    MAX_TAGS,
    MAX_TEXT_LENGTH,
    in_time,
)
from assocmem.engine.position import Position
from assocmem.engine.state.note_concepts import checked_concepts

VERSIONS = {record.name: record.version for record in (MEMORY_WRITTEN, ACTIVITY_LOGGED)}
"""The versions of the notes this decoder reads at once: older ones take the upcasting path."""

_Concept = Annotated[str, Meta(min_length=1, max_length=MAX_CONCEPT_LENGTH)]
_Label = Annotated[str, Meta(min_length=1, max_length=MAX_LABEL_LENGTH)]


class _Note(Struct, forbid_unknown_fields=True):
    """What memory.written and activity.logged payloads share, as their `build` makes them:
    every field always written, so a decoded one has the same keys as the JSON."""

    text: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_LENGTH)]
    concepts: Annotated[list[_Concept], Meta(max_length=MAX_CONCEPTS)]
    tiers: Annotated[list[int], Meta(min_length=2, max_length=2)] | None
    labels: dict[str, _Concept]
    importance: Annotated[int, Meta(ge=1, le=5)]
    extractor: str


class _Written(_Note):
    supersedes: (
        Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=MAX_SUPERSEDES)]
        | UnsetType
    ) = UNSET
    """Written only when there are some."""


class _Activity(_Note):
    category: _Label
    tags: Annotated[list[_Label], Meta(max_length=MAX_TAGS)]
    source: _Label | None


_Data = TypeVar("_Data", _Written, _Activity)


class _Envelope(Struct, Generic[_Data], forbid_unknown_fields=True):
    v: int
    type: str
    tenant: str
    agent: str
    user: str | None
    ts: float
    key: str | None
    data: _Data
    session: str | None = None
    namespace: str | None = None


def _decoder(name: str, payload: type) -> tuple[bytes, str, msgspec.json.Decoder]:
    """How `encode_event` starts the envelope of `name`, and its decoder."""
    prefix = f'{{"v":{VERSIONS[name]},"type":"{name}",'.encode()
    return prefix, name, msgspec.json.Decoder(_Envelope[payload])  # type: ignore[valid-type]


_WRITTEN = _decoder("memory.written", _Written)
_ACTIVITY = _decoder("activity.logged", _Activity)
"""An envelope that starts otherwise is left to the ordinary way, which is how a write of
another version or type costs no failed attempt here."""


class ColumnNote(Struct, gc=False):
    """A checked note as the fold stages it in columns (engine/state/note_columns.py): its
    decoded envelope, with no Event, payload dict or Memory made of it. A Struct, made in C
    (with a dataclass's __init__ the fold took 0.6% more instructions)."""

    type: str
    position: Position
    envelope: _Envelope[_Written] | _Envelope[_Activity]
    indices: array[int]
    """Its concepts' indices in the fold's state as it was decoded (-1: new then)."""
    new: tuple[int, ...]
    """Where those new then are among its concepts."""


_NO_CONCEPTS: dict[str, int] = {}


def checked_note(
    raw: bytes, position: Position, concept_index: dict[str, int] | None = None
) -> Event | ColumnNote | None:
    """The memory.written or activity.logged event in `raw`, marked `checked` (its type's
    check would pass), if it is one that this decoder is sure of; None otherwise.
    With the `concept_index` of the state it is to be folded into: a ColumnNote instead,
    with its concepts' indices, unless it supersedes memories (the fold looks those up, so
    it makes an Event of it)."""
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
    note = envelope.data
    if envelope.type != name or envelope.v != VERSIONS[name]:  # a key given twice
        return None
    if not in_time(envelope.ts):
        return None
    looked_up = _sound(note, _NO_CONCEPTS if concept_index is None else concept_index)
    if looked_up is None:
        return None
    if concept_index is not None and (isinstance(note, _Activity) or not note.supersedes):
        return ColumnNote(name, position, envelope, *looked_up)
    return Event(
        name,
        envelope.tenant,
        envelope.agent,
        envelope.ts,
        _payload(note),
        envelope.user,
        envelope.key,
        VERSIONS[name],
        envelope.session,
        envelope.namespace,
        position,
        checked=True,
    )


def _sound(
    note: _Written | _Activity, concept_index: dict[str, int]
) -> tuple[array[int], tuple[int, ...]] | None:
    """What the payload's types do not say and its type's check asks: None where it fails,
    else the note's concepts' indices in `concept_index` and where those it does not hold
    are (engine/state/note_concepts.py)."""
    if not note.text.strip():
        return None
    tiers = note.tiers
    if tiers is not None and not 0 <= tiers[0] <= tiers[1] <= len(note.concepts):
        return None
    if isinstance(note, _Activity):
        named = [note.category, *note.tags] + ([note.source] if note.source is not None else [])
        if not all(map(str.strip, named)):
            return None
    return checked_concepts(note.concepts, note.labels, concept_index)


def _payload(note: _Written | _Activity) -> dict[str, object]:
    """The payload's dict, as the JSON held it."""
    data: dict[str, object] = {
        "text": note.text,
        "concepts": note.concepts,
        "tiers": note.tiers,
        "labels": note.labels,
        "importance": note.importance,
        "extractor": note.extractor,
    }
    if isinstance(note, _Activity):
        data["category"], data["tags"], data["source"] = note.category, note.tags, note.source
    elif note.supersedes is not UNSET:
        data["supersedes"] = note.supersedes
    return data
