"""The state a reader serves: the latest snapshot, then every event after it, kept up to date."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from assocmem.engine.state import State

from .event_log import EventLog
from .heap import freeze_long_lived
from .replay import fold_entries, starting_state
from .snapshot_store import SnapshotStore

log = logging.getLogger(__name__)

DEFAULT_REFRESH_INTERVAL = 0.5
"""Seconds between background folds of the log tail, so a read never folds a long backlog."""


class LiveState:
    """One tenant's state, refreshed from the log tail before each read and in the background.

    Folding is in place, under a lock: readers hold the lock while they read so
    they never see a half-applied batch.
    """

    def __init__(self, log_: EventLog, store: SnapshotStore, tenant: str) -> None:
        self._log = log_
        self._store = store
        self._tenant = tenant
        self._state: State | None = None
        self.lock = threading.RLock()

    @property
    def served_position(self) -> str | None:
        """The position folded up to so far (None before the first load); reads no Redis."""
        return self._state.position if self._state else None

    def settled(self) -> bool:
        """Loaded, and nobody folding right now: a read will not wait on a long fold."""
        if self._state is None or not self.lock.acquire(blocking=False):
            return False
        self.lock.release()
        return True

    @contextlib.contextmanager
    def served(self) -> Iterator[State]:
        """The state folded up to the end of the log now, locked against folds while in use."""
        self.refresh()
        with self.lock:
            assert self._state is not None
            yield self._state

    def refresh(self) -> None:
        """Fold the log tail. Reads Redis without the lock, so readers never wait on the network."""
        if self._state is None:
            with self.lock:
                if self._state is None:
                    self._state = starting_state(self._store, self._tenant, None)
                    freeze_long_lived()
        chunks = list(self._log.iter_entries(self._tenant, self._state.position))
        if chunks:
            with self.lock:
                fold_entries(self._state, chunks)
                freeze_long_lived()

    def keep_fresh(self, stop: threading.Event, interval: float = DEFAULT_REFRESH_INTERVAL) -> None:
        """Fold the tail every `interval` seconds until `stop` is set (run in a thread)."""
        while True:
            try:
                self.refresh()
            except Exception:  # a Redis hiccup must not end the loop; the next read retries too
                log.exception("background refresh of %s failed", self._tenant)
            if stop.wait(interval):
                return
