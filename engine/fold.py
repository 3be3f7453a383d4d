"""The fold: applies events to a state, through each event type's record.

Deterministic and free of I/O. An event at or before the state's position is a
duplicate and is skipped; an event that cannot be applied is returned as a
rejection (for the dead-letter stream) and the fold goes on past it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .errors import InvalidEvent
from .event import Event, check_time
from .event_type import event_type
from .link_index import UNINDEXED
from .note_runs import add_notes, joins_run
from .position import Position
from .state import SEALED_ROWS, State

STAGED_AT_MOST = 50_000
"""Notes a fold stages before it indexes them (a long run of notes is indexed in parts of
this size, so what staging holds stays bounded)."""
COLUMNAR_RUN = SEALED_ROWS
"""Notes in a row that a columnar fold registers as one block of columns
(engine/note_runs.py): as many as the workers seal into a block, so that a state holds no
more blocks than sealing makes. A shorter run is folded one note at a time."""


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    position: Position
    reason: str


def fold(
    state: State, events: Iterable[Event], checked: bool = False, columnar: bool = False
) -> list[Rejection]:
    """Apply `events` (in log order) to `state` in place; return what was rejected.

    `checked`: every event's time and payload passed its type's check already (the
    application's, on these very objects, before it appended them), so they are not checked
    again: the same check of the same values, a tenth of the fold of short notes.

    `columnar`: runs of notes are read ahead and a long one is folded as a block of
    columns, with the same result (a fold of commit messages went a quarter faster, and
    the workers need not seal the rows again); an event is then not always applied
    when the next one is asked for (a caller watching the state between events, as
    engine/audit.py does, folds without)."""
    rejections: list[Rejection] = []
    run: list[Event] = []
    after = state.position
    for event in events:
        assert event.position is not None, "only appended events are folded"
        if event.position <= after:
            continue
        after = event.position
        if columnar and joins_run(event):
            run.append(event)
            if len(run) == STAGED_AT_MOST:
                _fold_run(state, run, checked, rejections)
                run = []
            continue
        if run:
            _fold_run(state, run, checked, rejections)
            run = []
        _fold_one(state, event, checked, rejections)
    if run:
        _fold_run(state, run, checked, rejections)
    state.flush()
    return rejections


def _fold_one(state: State, event: Event, checked: bool, rejections: list[Rejection]) -> None:
    try:
        record = event_type(event.type)
        if not record.keeps_staged or len(state.staged) >= STAGED_AT_MOST:
            state.flush()
        if not checked:
            check_time(event.ts)
            record.check(event.data)
        record.apply(state, event)
        if record.name not in UNINDEXED:
            state.link_events.append(event.position)
    except InvalidEvent as exc:
        rejections.append(Rejection(event.position, str(exc)))
    _advance(state, event)


def _fold_run(state: State, run: list[Event], checked: bool, rejections: list[Rejection]) -> None:
    """Notes that `joins_run`, in log order: a long run as one block, a short one (or one
    that cannot be a block) one at a time."""
    if len(run) < COLUMNAR_RUN:
        for event in run:
            _fold_one(state, event, checked, rejections)
        return
    valid = run if checked else [e for e in run if _valid(e, rejections)]
    if valid and not add_notes(state, valid):
        for event in valid:
            _fold_one(state, event, True, rejections)
    _advance(state, run[-1])


def _valid(event: Event, rejections: list[Rejection]) -> bool:
    try:
        check_time(event.ts)
        event_type(event.type).check(event.data)
    except InvalidEvent as exc:
        rejections.append(Rejection(event.position, str(exc)))  # type: ignore[arg-type]
        return False
    return True


def _advance(state: State, event: Event) -> None:
    """The state is folded up to the event (a reader of the log may have moved it past
    already, over entries it could not decode: it never goes back)."""
    if event.position > state.position:  # type: ignore[operator]
        state.position = event.position  # type: ignore[assignment]


def fold_from_zero(events: Iterable[Event]) -> State:
    state = State()
    fold(state, events, columnar=True)
    return state
