"""How many of a log's events are at or before a time: progress in events, not in time.

By time, a log idle for an hour after a million writes showed 25% until its last event and
then 100%. The snapshots kept along the log were published with the count of events folded
into them, so a position's place in the log is read off the nearest two (by time between
them, where events came at about one rate), and the log's length is the count at its end.
Without such counts it is by time, as before.
"""

from __future__ import annotations

import numpy as np

from assocmem.engine.position import ZERO, Position
from assocmem.workers.store.ports import EventLog, SnapshotStore

Counted = tuple[Position | None, dict[Position, int]]


def counted_snapshots(log: EventLog, store: SnapshotStore, tenant: str, upto: Position) -> Counted:
    """The log's first position (None if it has none up to `upto`), and the events folded
    into each snapshot kept after it up to `upto` whose count is known."""
    first = log.entries(tenant, ZERO, upto, 1)
    if not first:
        return None, {}
    start = first[0][0]
    counts = {p: store.folded(tenant, p) for p in store.starts(tenant) if start < p <= upto}
    return start, {p: n for p, n in counts.items() if n > 0}


class LogEvents:
    """The events of a tenant's log up to `upto`, by time."""

    def __init__(self, log: EventLog, tenant: str, upto: Position, counted: Counted) -> None:
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
        self.total = float(total)

    def at(self, ms: int) -> float:
        """Events up to the time `ms`, about."""
        return float(np.interp(ms, self._times, self._events))
