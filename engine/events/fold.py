"""The fold: applies events to a state, through each event type's record.

Deterministic and free of I/O. An event at or before the state's position is a
duplicate and is skipped; an event that cannot be applied is returned as a
rejection (for the dead-letter stream) and the fold goes on past it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.note_payload import ColumnNote, stage
from assocmem.engine.events.payload import check_time
from assocmem.engine.events.registry import event_type
from assocmem.engine.position import Position
from assocmem.engine.state.state import State

STAGED_AT_MOST = 50_000
"""Notes a fold stages before it indexes them (a long run of notes is indexed in parts of
this size, so what staging holds stays bounded)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    position: Position
    reason: str


def fold(
    state: State, events: Iterable[Event | ColumnNote], checked: bool = False
) -> list[Rejection]:
    """Apply `events` (in log order) to `state` in place; return what was rejected.

    `checked`: every event's time and payload passed its type's check already (the
    application's, on these very objects, before it appended them), so they are not checked
    again: the same check of the same values, a tenth of the fold of short notes. A
    ColumnNote was checked as it was decoded (engine/events/checked_note.py). Notes, in
    either form, are staged as columns (engine/events/note_payload.py)."""
    rejections: list[Rejection] = []
    for event in events:
        assert event.position is not None, "only appended events are folded"
        if event.position <= state.position:
            continue
        if event.__class__ is ColumnNote:  # checked as it was decoded
            stage(state, event)  # type: ignore[arg-type]
            state.position = event.position
            continue
        try:
            record = event_type(event.type)
            if not record.is_row:
                state.place_notes()  # the handler may look a note up
            if not record.keeps_staged or state.staged_rows >= STAGED_AT_MOST:
                state.flush()
            if not checked:
                check_time(event.ts)
                record.check(event.data)
            record.apply(state, event)
            if record.moves_links and not record.is_row:
                state.link_events.append(event.position)
        except InvalidEvent as exc:
            rejections.append(Rejection(event.position, str(exc)))
        state.position = event.position
    state.flush()
    return rejections


def fold_from_zero(events: Iterable[Event]) -> State:
    state = State()
    fold(state, events)
    return state
