"""The rule of memory.written and activity.logged payloads, declared once, and how a note
that obeys it is staged.

msgspec types say what types can say (types, lengths, ranges); `looked_up` checks the
rest (blank text, a repeated concept, a concept with space around it, tiers in order,
labels of the note's own concepts, blank activity labels) while it finds the concepts'
indices. The records check payloads with them (engine/events/memory_written.py), the
workers' decoder decodes stored notes straight into them (engine/events/checked_note.py),
and both fold paths stage the note the same way, as columns (engine/state/note_columns.py).
"""

from __future__ import annotations

import math
from array import array
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

import msgspec
from msgspec import Meta, Struct

from assocmem.engine.concept import MAX_CONCEPT_LENGTH
from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.payload import (
    MAX_CONCEPTS,
    MAX_LABEL_LENGTH,
    MAX_SUPERSEDES,
    MAX_TAGS,
    MAX_TEXT_LENGTH,
)
from assocmem.engine.position import Position
from assocmem.engine.state.note_concepts import checked_concepts
from assocmem.engine.state.state import State

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event

MAX_METADATA = 32
"""Keys of one memory's metadata."""
MAX_METADATA_KEY = 64
MAX_METADATA_TEXT = 1000
"""Characters of a metadata value that is a string."""

_Concept = Annotated[str, Meta(min_length=1, max_length=MAX_CONCEPT_LENGTH)]
_Label = Annotated[str, Meta(min_length=1, max_length=MAX_LABEL_LENGTH)]


class NotePayload(Struct):
    """What memory.written and activity.logged payloads share. Fields it does not name (the
    extractor's version) are let be, as the fold has always let them be."""

    text: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_LENGTH)]
    concepts: Annotated[list[_Concept], Meta(max_length=MAX_CONCEPTS)]
    importance: Annotated[int, Meta(ge=1, le=5)]
    tiers: Annotated[list[int], Meta(min_length=2, max_length=2)] | None = None
    labels: dict[str, _Concept] = {}


MetadataValue = Annotated[str, Meta(max_length=MAX_METADATA_TEXT)] | bool | int | float
"""A metadata value: a string, a number or a boolean (an object or a list is no filter's)."""


class Written(NotePayload, kw_only=True):
    supersedes: Annotated[
        list[Annotated[str, Meta(min_length=1)]], Meta(max_length=MAX_SUPERSEDES)
    ] = []
    metadata: Annotated[
        dict[Annotated[str, Meta(min_length=1, max_length=MAX_METADATA_KEY)], MetadataValue],
        Meta(max_length=MAX_METADATA),
    ] = {}
    """Flat, written only when there is some."""
    expires_at: float | None = None
    """Unix seconds after which reads no longer return it and the nightly pass erases it;
    written only when there is one."""


class Activity(NotePayload, kw_only=True):
    category: _Label
    tags: Annotated[list[_Label], Meta(max_length=MAX_TAGS)]
    source: _Label | None = None


_Data = TypeVar("_Data", Written, Activity)


class Envelope(Struct, Generic[_Data], forbid_unknown_fields=True):
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


class ColumnNote(Struct, gc=False):
    """A checked note as the fold stages it in columns: its envelope, with no Event,
    payload dict or Memory made of it. A Struct, made in C (with a dataclass's __init__
    the fold took 0.6% more instructions)."""

    type: str
    position: Position
    envelope: Envelope[Written] | Envelope[Activity]
    indices: array[int]
    """Its concepts' indices in the fold's state as it was checked (-1: new then)."""
    new: tuple[int, ...]
    """Where those new then are among its concepts."""


_NO_CONCEPTS: dict[str, int] = {}


def looked_up(
    note: Written | Activity, concept_index: dict[str, int]
) -> tuple[array[int], tuple[int, ...]] | None:
    """What the payload's types do not say: None where it fails, else the note's concepts'
    indices in `concept_index` and where those it does not hold are
    (engine/state/note_concepts.py)."""
    if not note.text.strip():
        return None
    tiers = note.tiers
    if tiers is not None and not 0 <= tiers[0] <= tiers[1] <= len(note.concepts):
        return None
    if isinstance(note, Activity):
        named = [note.category, *note.tags] + ([note.source] if note.source is not None else [])
        if not all(map(str.strip, named)):
            return None
    elif note.metadata and not _sound_metadata(note.metadata):
        return None
    elif note.expires_at is not None and not math.isfinite(note.expires_at):
        return None
    return checked_concepts(note.concepts, note.labels, concept_index)


def _sound_metadata(metadata: dict[str, object]) -> bool:
    """Keys of text with no space around them, and numbers JSON can write (NaN cannot)."""
    return all(k == k.strip() for k in metadata) and all(
        math.isfinite(v) for v in metadata.values() if isinstance(v, float)
    )


def checked(data: dict[str, Any], payload: type[_Data]) -> None:
    """Raise InvalidEvent, saying why, unless `data` obeys the rule of `payload`."""
    _found(_converted(data, payload), _NO_CONCEPTS)


def note_of(event: Event, payload: type[_Data], concept_index: dict[str, int]) -> ColumnNote:
    """The note of an appended `event`, ready to stage into the state of `concept_index`;
    InvalidEvent, saying why, if it breaks the rule of `payload`."""
    assert event.position is not None, "only appended events are folded"
    data = _converted(event.data, payload)
    envelope = Envelope(  # type: ignore[var-annotated]
        event.v,
        event.type,
        event.tenant,
        event.agent,
        event.user,
        event.ts,
        event.key,
        data,
        event.session,
        event.namespace,
    )
    return ColumnNote(event.type, event.position, envelope, *_found(data, concept_index))


def _converted(data: dict[str, Any], payload: type[_Data]) -> _Data:
    try:
        return msgspec.convert(data, payload)
    except msgspec.ValidationError as exc:
        raise InvalidEvent(_said(exc)) from exc


def _found(
    note: Written | Activity, concept_index: dict[str, int]
) -> tuple[array[int], tuple[int, ...]]:
    found = looked_up(note, concept_index)
    if found is None:
        raise InvalidEvent(_why_unsound(note))
    return found


def _said(exc: msgspec.ValidationError) -> str:
    """msgspec's complaint with the field first: `text: expected ...`."""
    message, _, where = str(exc).partition(" - at `$.")
    message = message[:1].lower() + message[1:]
    return f"{where.rstrip('`')}: {message}" if where else f"payload: {message}"


def _why_unsound(note: Written | Activity) -> str:
    """Why `looked_up` refused `note` (asked only once it has)."""
    if not note.text.strip():
        return f"text {quoted(note.text[:40])} is blank: expected non-blank text"
    if note.tiers is not None and not 0 <= note.tiers[0] <= note.tiers[1] <= len(note.concepts):
        return f"tiers {note.tiers} is invalid: expected [core, core + important] within the {len(note.concepts)} concepts"
    if isinstance(note, Activity):
        for field, value in (("category", note.category), ("source", note.source)):
            if value is not None and not value.strip():
                return f"{field} {quoted(value)} is blank: expected text"
        if not all(map(str.strip, note.tags)):
            return f"tags {quoted(note.tags)} has a blank tag: expected text"
    if len(set(note.concepts)) != len(note.concepts):
        return f"concepts {quoted(note.concepts)} repeats a concept: expected each once"
    for concept in note.concepts:
        if concept != concept.strip():
            return f"concepts item {quoted(concept)} has space at either end: expected a normalised concept"
    if isinstance(note, Written) and not _sound_metadata(note.metadata):
        return f"metadata {quoted(note.metadata)} is invalid: expected keys with no space around them and finite numbers"
    if isinstance(note, Written) and not math.isfinite(note.expires_at or 0.0):
        return f"expires_at {note.expires_at} is invalid: expected a finite time"
    stray = sorted(set(note.labels) - set(note.concepts))
    return f"labels names {stray[:3]}, not among the concepts: expected their words"


def column_note(
    type_: str,
    position: Position,
    envelope: Envelope[Written] | Envelope[Activity],
    concept_index: dict[str, int],
) -> ColumnNote | None:
    """The note of `envelope`, ready to stage into the state of `concept_index`; None if its
    payload breaks a rule its types do not say."""
    found = looked_up(envelope.data, concept_index)
    return None if found is None else ColumnNote(type_, position, envelope, *found)


def stage(state: State, note: ColumnNote) -> None:
    """Fold `note` into `state`: staged as columns, and the memories it supersedes marked."""
    state.note_columns.add(state, note)
    data = note.envelope.data
    if isinstance(data, Written) and data.supersedes:
        state.place_notes()  # so the new memory is a row
        new = str(note.position)
        for old in data.supersedes:
            if old in state.memories and old != new:
                state.supersede(state.memories[old], new)
