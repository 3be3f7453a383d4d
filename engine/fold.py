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
from .position import Position
from .state import State

STAGED_AT_MOST = 50_000
"""Notes a fold stages before it indexes them (a long run of notes is indexed in parts of
this size, so what staging holds stays bounded)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    position: Position
    reason: str


def fold(state: State, events: Iterable[Event], checked: bool = False) -> list[Rejection]:
    """Apply `events` (in log order) to `state` in place; return what was rejected.

    Each event is applied before the next is asked for (an audit looks at the state between
    them). `checked`: every event's time and payload passed its type's check already (the
    application's, on these very objects, before it appended them), so they are not checked
    again: the same check of the same values, a tenth of the fold of short notes."""
    return fold_chunks(state, ([event] for event in events), checked)


def fold_chunks(
    state: State, chunks: Iterable[list[Event]], checked: bool = False
) -> list[Rejection]:
    """`fold` of chunks of events, each given whole: consecutive events of a type with a
    run handler (notes) are applied in one step, the same as one by one, a chunk at a time."""
    rejections: list[Rejection] = []
    for chunk in chunks:
        run: list[Event] = []
        for event in chunk:
            assert event.position is not None, "only appended events are folded"
            if event.position <= state.position:
                continue
            try:
                record = event_type(event.type)
                if not checked:
                    check_time(event.ts)
                    record.check(event.data)
                if run and run[0].type != event.type:
                    _apply_run(state, run)
                    run = []
                if record.apply_run is not None:
                    run.append(event)
                else:
                    if not record.keeps_staged or len(state.staged) >= STAGED_AT_MOST:
                        state.flush()
                    record.apply(state, event)
            except InvalidEvent as exc:
                rejections.append(Rejection(event.position, str(exc)))
            state.position = event.position
        if run:
            _apply_run(state, run)
    state.flush()
    return rejections


def _apply_run(state: State, run: list[Event]) -> None:
    """Consecutive valid events of one type with a run handler (staying in staging, which
    is flushed whenever it holds STAGED_AT_MOST notes, as one by one)."""
    apply_run = event_type(run[0].type).apply_run
    assert apply_run is not None
    done = 0
    while done < len(run):
        if len(state.staged) >= STAGED_AT_MOST:
            state.flush()
        room = STAGED_AT_MOST - len(state.staged)
        apply_run(state, run[done : done + room])
        done += room


def fold_from_zero(events: Iterable[Event]) -> State:
    state = State()
    fold(state, events)
    return state
