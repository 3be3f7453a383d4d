"""Retrieval strengthening: memories a read returned are counted, then logged in batches.

A read only adds to an in-memory counter; a background thread appends one
`memory.accessed` event per interval, so no read waits on a write. Appended
through the service, so a later read of the same process sees the counts.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

from assocmem.engine.event import MEMORY_ACCESSED, Event
from assocmem.engine.payload import MAX_ACCESS_IDS

log = logging.getLogger(__name__)

FLUSH_INTERVAL = 2.0
"""Seconds between memory.accessed events."""


class AccessRecorder:
    def __init__(self, append: Callable[[list[Event]], object], tenant: str, agent: str) -> None:
        self._append = append
        self._tenant = tenant
        self._agent = agent
        self._hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        """A flush returns only once any flush already under way has appended."""

    def record(self, ids: list[str]) -> None:
        with self._lock:
            self._hits.update(ids)

    def flush(self) -> int:
        """Append what was counted since the last flush; return how many memories it named."""
        with self._flushing:
            return self._flush()

    def _flush(self) -> int:
        with self._lock:
            hits, self._hits = self._hits, Counter()
        ids = sorted(hits)
        events = [
            Event(
                MEMORY_ACCESSED,
                self._tenant,
                self._agent,
                time.time(),
                {"memory_ids": chunk, "hits": [hits[i] for i in chunk]},
            )
            for chunk in (ids[n : n + MAX_ACCESS_IDS] for n in range(0, len(ids), MAX_ACCESS_IDS))
        ]
        if events:
            try:
                self._append(events)
            except Exception:
                with self._lock:  # keep the counts for the next flush
                    self._hits.update(hits)
                raise
        return len(ids)

    def run(self, stop: threading.Event, interval: float = FLUSH_INTERVAL) -> None:
        while not stop.wait(interval):
            try:
                self.flush()
            except Exception:
                log.exception("recording accesses failed; retrying at the next interval")
        self.flush()
