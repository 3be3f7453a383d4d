"""How far a replay is, in events folded rather than in the log's time.

By time, a log idle for an hour after a million writes showed 25% until the last event and
then 100%. The snapshots kept along the log were published with the count of events folded
into them, so a position's place in the log is read off the nearest two (by time between
them, where events came at about one rate), and the log's length is the count at its end.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from assocmem.engine.position import ZERO, Position

from .job_progress import Share
from .stores import EventLog, SnapshotStore


def counted_snapshots(
    log: EventLog, store: SnapshotStore, tenant: str, upto: Position
) -> tuple[Position | None, dict[Position, int]]:
    """The log's first position (None if it has none up to `upto`), and the events folded
    into each snapshot kept after it up to `upto` whose count is known."""
    first = log.entries(tenant, ZERO, upto, 1)
    if not first:
        return None, {}
    start = first[0][0]
    counts = {p: store.folded(tenant, p) for p in store.starts(tenant) if start < p <= upto}
    return start, {p: n for p, n in counts.items() if n > 0}


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
        counted: tuple[Position | None, dict[Position, int]],
        report: Share,
    ) -> None:
        """`counted`: `counted_snapshots` up to `upto`."""
        start, counts = counted
        start = start or upto
        total = max([1, *counts.values()])
        if upto == log.last_position(tenant):
            total = max(total, log.length(tenant))
        points = [(start.ms, 0), *((p.ms, n) for p, n in sorted(counts.items()))]
        points.append((upto.ms, total))
        self._times = np.array([t for t, _ in points], dtype=np.float64)
        self._events = np.array([n for _, n in points], dtype=np.float64)
        self._total = float(total)
        self._report = report
        self._first = start.ms
        self._second: Reached | None = None
        self._middle = 0.0

    def halves(self, middle: Position, second: Reached | None) -> None:
        """A second half folds from `middle` meanwhile (None: no longer)."""
        self._second, self._middle = second, self._events_at(middle.ms)

    def first_at(self, position: Position) -> None:
        """The fold from zero is at `position`."""
        self._first = position.ms
        self.report()

    def report(self) -> None:
        done = self._events_at(self._first)
        if self._second is not None:
            done += max(0.0, self._events_at(self._second.reached()) - self._middle)
        self._report(min(1.0, max(0.0, done / self._total)))

    def _events_at(self, ms: int) -> float:
        """Events of the log up to the time `ms`, about."""
        return float(np.interp(ms, self._times, self._events))
