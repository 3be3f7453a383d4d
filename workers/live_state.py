"""The state a reader serves: the latest snapshot, then every event after it, kept up to date."""

from __future__ import annotations

import threading

from assocmem.engine.state import State

from .event_log import EventLog
from .replay import fold_log, starting_state
from .snapshot_store import SnapshotStore


class LiveState:
    """One tenant's state, refreshed from the log tail before each read.

    Folding is in place, under a lock: readers hold the lock while they read so
    they never see a half-applied batch.
    """

    def __init__(self, log_: EventLog, store: SnapshotStore, tenant: str) -> None:
        self._log = log_
        self._store = store
        self._tenant = tenant
        self._state: State | None = None
        self.lock = threading.RLock()

    def current(self) -> State:
        """The state folded up to the end of the log now. Call with `lock` held."""
        if self._state is None:
            self._state = starting_state(self._store, self._tenant, None)
        fold_log(self._state, self._log, self._tenant)
        return self._state
