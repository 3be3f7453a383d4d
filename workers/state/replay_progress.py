"""How far a replay is, in events folded (workers/state/log_events.py): the fold from zero's,
and that of a second half folding at once from a snapshot."""

from __future__ import annotations

from typing import Protocol

from assocmem.engine.position import Position
from assocmem.workers.job_progress import Share
from assocmem.workers.state.log_events import Counted, LogEvents
from assocmem.workers.store.ports import EventLog


class Reached(Protocol):
    def reached(self) -> int:
        """Where a fold is, in a position's milliseconds (0: not started)."""
        ...


class ReplayProgress:
    """Reports the share of the events up to `upto` that the fold from zero, and a second
    half folding at once from a snapshot (`halves`), have folded."""

    def __init__(
        self,
        log: EventLog,
        tenant: str,
        upto: Position,
        counted: Counted,
        report: Share,
    ) -> None:
        """`counted`: `counted_snapshots` up to `upto`."""
        self._events = LogEvents(log, tenant, upto, counted)
        self._report = report
        self._first = (counted[0] or upto).ms
        self._second: Reached | None = None
        self._middle = 0.0

    def halves(self, middle: Position, second: Reached | None) -> None:
        """A second half folds from `middle` meanwhile (None: no longer)."""
        self._second, self._middle = second, self._events.at(middle.ms)

    def first_at(self, position: Position) -> None:
        """The fold from zero is at `position`."""
        self._first = position.ms
        self.report()

    def report(self) -> None:
        done = self._events.at(self._first)
        if self._second is not None:
            done += max(0.0, self._events.at(self._second.reached()) - self._middle)
        self._report(min(1.0, max(0.0, done / self._events.total)))
