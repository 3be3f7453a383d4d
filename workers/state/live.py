"""The state a reader serves: the latest snapshot, then every event after it, kept up to date."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from itertools import chain

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold
from assocmem.engine.position import ZERO, Position
from assocmem.engine.state.state import State
from assocmem.workers.errors import PositionAhead, StoreError
from assocmem.workers.state.heap import collection_paused
from assocmem.workers.state.rebuild import fold_entries, starting_state
from assocmem.workers.state.snapshot_cache import Copy, SnapshotCache, latest_state
from assocmem.workers.store.ports import Appended, EventLog, SnapshotStore, iter_entries
from assocmem.workers.store.redis.errors import Outage

log = logging.getLogger(__name__)

Loaded = tuple[int, State]
"""The log's epoch, read before the snapshot, and the state of the snapshot."""

BYTES_PER_MEMORY = 1500
"""A live state's memory per memory it holds: about 1.5 GB at a million commit messages
(bench/README.md); what the application's budget of tenant states counts, with
BYTES_PER_TENANT."""
BYTES_PER_TENANT = 3_500_000
"""And per tenant, whatever its size: replicas grew by 4-6.5 MB per tenant of 1,000 commit
messages they loaded (bench/many_tenants.py)."""
TAIL_WAIT = 1.0
"""Seconds the background fold blocks on the stream for new entries before it checks `stop`."""
RETRY_AFTER = 0.5
"""Seconds the background fold waits after Redis failed it."""
SETTLE = 0.005
"""Seconds the background fold waits after entries arrive before it reads them: the request
that appended them through this process hands them over meanwhile (`fold_appended`), and
entries arriving together are folded in one step."""
HANDOFF_WAIT = 0.05
"""Seconds the background fold waits at most, after entries arrive, for appends this
process has in flight to hand their events over: reading them back from the log and
decoding them cost the API a fifth of its time under a stream of batches."""
HANDOFF_BATCHES = 256
"""Batches of this process's appends held for the background fold at most; past that (no
fold for a while), the oldest is dropped and read back from the log instead."""


class LiveState:
    """One tenant's state, folded up to the log's end as entries arrive.

    A background thread blocks on the stream (XREAD) and folds each new entry
    within milliseconds, so a read needs no Redis round trip, unless it asks for a
    position not folded yet: its own `after`, or the latest append made through this
    process. Folding is in place, under a lock: readers hold the lock while they read
    so they never see a half-applied batch.
    """

    def __init__(
        self,
        log_: EventLog,
        store: SnapshotStore,
        tenant: str,
        preloaded: Callable[[], Loaded | None] | None = None,
    ) -> None:
        self._log = log_
        self._store = store
        self._tenant = tenant
        self._preloaded = preloaded
        """(epoch, state) loaded elsewhere (workers/state/preload.py), taken at the first load."""
        self._state: State | None = None
        self._caught_up = False
        """Folded once up to the log's end as it was then (`caught_up`)."""
        self._epoch = 0
        self._appended = ZERO
        self._appended_lock = threading.Lock()
        self._handoff: dict[Position, list[Event]] = {}
        """Batches this process appended, by the position each follows (`fold_appended`)."""
        self._appending = 0
        self._handed = threading.Condition(self._appended_lock)
        """Notified when an append of this process has handed its events over (`appending`)."""
        self.lock = threading.RLock()
        self.closed = threading.Event()
        """Set when the application lets the state go (`close`): its refresh loop ends."""

    def close(self) -> None:
        """Stop refreshing (a tenant the application let go, for its budget): the state is
        freed once the refresh loop has ended, within TAIL_WAIT, and no reader holds it."""
        self.closed.set()

    def approx_bytes(self) -> int:
        """The memory the state holds, estimated (BYTES_PER_TENANT, BYTES_PER_MEMORY)."""
        state = self._state
        if state is None:
            return 0
        return BYTES_PER_TENANT + len(state.memories) * BYTES_PER_MEMORY

    @property
    def served_position(self) -> Position | None:
        """The position folded up to so far (None before the first load); reads no Redis."""
        return self._state.position if self._state else None

    @property
    def caught_up(self) -> bool:
        """Loaded, and folded at least once up to the log's end: a first read does not wait
        for the events after the snapshot (on a large log, one came a second after the
        state had loaded)."""
        return self._caught_up

    def settled(self) -> bool:
        """Loaded, and nobody folding right now: a read will not wait on a long fold."""
        if self._state is None or not self.lock.acquire(blocking=False):
            return False
        self.lock.release()
        return True

    def note_appended(self, position: Position) -> None:
        """A write through this process: reads here wait for it without being told."""
        with self._appended_lock:
            self._appended = max(self._appended, position)

    @contextlib.contextmanager
    def served(self, after: Position | None = None) -> Iterator[State]:
        """The state folded at least up to `after` and to this process's own appends.

        Locked against folds while in use. Raises PositionAhead if `after` is not in the log.
        """
        wanted = self._appended if after is None else max(self._appended, after)
        if self._state is not None and wanted > self._state.position and self._handoff:
            with self.lock:
                self._fold_handed()
        if self._state is None or wanted > self._state.position:
            self.refresh()
        with self.lock:
            assert self._state is not None
            if wanted > self._state.position:
                raise PositionAhead(
                    f"after '{wanted}' is past the end of the log ({self._state.position})"
                )
            yield self._state

    @contextlib.contextmanager
    def appending(self) -> Iterator[None]:
        """Around an append through this process and the `fold_appended` after it: the
        background fold waits for its events (HANDOFF_WAIT at most) instead of reading them
        back from the log."""
        with self._handed:
            self._appending += 1
        try:
            yield
        finally:
            with self._handed:
                self._appending -= 1
                self._handed.notify_all()

    def fold_appended(self, events: list[Event], appended: list[Appended]) -> None:
        """Hand events this process has just appended to the background fold as they are:
        folded without reading them back from Redis or decoding them, when nothing came
        between the state and them (else they are read from the log like any entry)."""
        new = [
            e.at(a.position) for e, a in zip(events, appended, strict=True) if not a.is_duplicate
        ]
        first = next((a.previous for a in appended if not a.is_duplicate), None)
        if not new or first is None:
            return
        with self._appended_lock:
            if len(self._handoff) >= HANDOFF_BATCHES:  # not folded for a while: read back
                del self._handoff[next(iter(self._handoff))]
            self._handoff[first] = new

    def _fold_handed(self) -> None:
        """Fold the handed batches that follow the state (the lock held)."""
        state = self._state
        assert state is not None
        while True:
            with self._appended_lock:
                # A batch following a position at or before the state's: its events up to
                # the state's position are skipped by the fold, the rest come next in the log.
                ready = sorted(k for k in self._handoff if k <= state.position)
                batches = [self._handoff.pop(k) for k in ready]
            if not batches:
                return
            with collection_paused():
                # One fold: notes indexed once. Checked: the application built each payload
                # through its type's record, which checks it (EventType.payload)
                fold(state, chain.from_iterable(batches), checked=True)

    def refresh(self) -> None:
        """Fold the log tail. Reads Redis without the lock, so readers never wait on the network."""
        if self._state is None:
            with self.lock:
                if self._state is None:
                    self._epoch, self._state = self._first_load()
        if self._handoff:
            with self.lock:
                self._fold_handed()
        chunks = list(iter_entries(self._log, self._tenant, self._state.position))
        if chunks:
            with self.lock:
                fold_entries(self._state, chunks)  # frozen after it (workers/state/heap.py)
                self._fold_handed()  # what the log gave already: skipped, and let go
        self._caught_up = self._state is not None

    def _first_load(self) -> Loaded:
        preloaded, self._preloaded = self._preloaded, None
        loaded = preloaded() if preloaded is not None else None
        return loaded or latest_loaded(self._log, self._store, self._tenant)

    def reload_if_rewritten(self) -> None:
        """An erasure rewrote the log: drop the state (it holds what was erased) and load
        the snapshot published after the rewrite."""
        if self._state is not None and self._log.epoch(self._tenant) != self._epoch:
            with self.lock:
                self._state = None
                self._caught_up = False
                self._appended = ZERO
                with self._appended_lock:
                    self._handoff.clear()

    def keep_fresh(self, stop: threading.Event, wait: float = TAIL_WAIT) -> None:
        """Fold every new entry as it arrives, until `stop` is set (run in a thread)."""
        outage = Outage(f"background refresh of {self._tenant}")
        while not (stop.is_set() or self.closed.is_set()):
            try:
                self.reload_if_rewritten()
                self.refresh()
                outage.passed()
                if self._log.wait_for_entries(self._tenant, self.served_position or ZERO, wait):
                    stop.wait(SETTLE)
                    with self._handed:
                        self._handed.wait_for(lambda: self._appending == 0, HANDOFF_WAIT)
            except Exception as exc:  # a Redis hiccup must not end the loop; reads retry too
                if stop.is_set():  # the connections closed under it: the process is stopping
                    return
                outage.failed(exc, RETRY_AFTER)
                stop.wait(RETRY_AFTER)


def latest_loaded(
    log_: EventLog,
    store: SnapshotStore,
    tenant: str,
    cache: SnapshotCache | None = None,
    early: Copy | None = None,
) -> Loaded:
    """The epoch first: an erasure that rewrites the log after it makes it stale, and the
    state is loaded again (`reload_if_rewritten`). With `cache` (the tenant's local copy)
    and `early` (that copy decoded ahead), the copy is used and kept (snapshot_cache.py).
    If the latest snapshot cannot be read, the state starts from zero, and the workers are
    asked to replace that snapshot, without waiting for the next event."""
    epoch = log_.epoch(tenant)
    if cache is not None:
        state = latest_state(store, cache, early)
    else:
        state = starting_state(store, tenant, None)
    latest = store.latest_position(tenant)
    if latest is not None and state.position < latest:  # unreadable (say, an older format)
        try:
            log_.want_fold(tenant)  # the workers fold from zero and replace it
        except StoreError as exc:  # Redis refusing writes: the tenant's next event asks
            log.warning("asking the workers to replace it failed: %s", exc)
    return epoch, state
