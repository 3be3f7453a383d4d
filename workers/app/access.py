"""Retrieval strengthening: memories a read returned are counted, then logged in batches.

A read only adds to an in-memory counter; a background thread appends one
`memory.accessed` event per tenant and interval, so no read waits on a write. Appended
through the application, so a later read of the same process sees the counts.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from assocmem.engine.events.memory_accessed import MAX_ACCESS_IDS, MEMORY_ACCESSED
from assocmem.engine.principal import Principal
from assocmem.workers.store.redis.errors import Outage

FLUSH_INTERVAL = 2.0
"""Seconds between memory.accessed events."""

Append = Callable[[Principal, str, list[dict[str, object]]], object]
"""(principal, event type, payloads): the application's append."""


class AccessRecorder:
    def __init__(self, append: Append) -> None:
        self._append = append
        self._hits: dict[Principal, Counter[str]] = {}
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        """A flush returns only once any flush already under way has appended."""

    def record(self, principal: Principal, ids: list[str]) -> None:
        with self._lock:
            self._hits.setdefault(principal, Counter()).update(ids)

    def flush(self) -> int:
        """Append what was counted since the last flush; return how many memories it named."""
        with self._flushing:
            with self._lock:
                taken, self._hits = self._hits, {}
            named = 0
            for principal, hits in taken.items():
                try:
                    named += self._flush(principal, hits)
                except Exception:
                    with self._lock:  # keep the counts for the next flush
                        self._hits.setdefault(principal, Counter()).update(hits)
                    raise
            return named

    def _flush(self, principal: Principal, hits: Counter[str]) -> int:
        ids = sorted(hits)
        chunks = (ids[n : n + MAX_ACCESS_IDS] for n in range(0, len(ids), MAX_ACCESS_IDS))
        payloads = [MEMORY_ACCESSED.payload(hits={i: hits[i] for i in chunk}) for chunk in chunks]
        if payloads:
            self._append(principal, MEMORY_ACCESSED.name, payloads)
        return len(ids)

    def run(self, stop: threading.Event, interval: float = FLUSH_INTERVAL) -> None:
        outage = Outage("recording accesses")
        while not stop.wait(interval):
            try:
                self.flush()
                outage.passed()
            except Exception as exc:
                outage.failed(exc, interval)
        self.flush()
