"""Rebuilt states kept between requests: `without_feedback` and `as_of` reads fold once, not
on every request. A state rebuilt up to the log's end is brought up to date by folding only
what came after it; one rebuilt up to an earlier point is folded on to a later one asked
for, when no snapshot between them would start a rebuild nearer (someone stepping through
a link's history forwards folds each step's events once)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from assocmem.engine.position import MAX_PART, ZERO, Position
from assocmem.engine.state.state import State
from assocmem.workers.state.rebuild import Rebuild, fold_log, folds_on, log_share, rebuild
from assocmem.workers.store.ports import EventLog, SnapshotStore

KEPT = 2
"""Rebuilt states kept (each is a whole state: hundreds of MB at 50,000 memories)."""

Key = tuple[str, int, Position | None, frozenset[str]]
"""Tenant, epoch (a rewritten history is rebuilt anew), up to, events skipped."""


@dataclasses.dataclass(slots=True)
class Rebuilding:
    """A rebuild under way, for whoever waits for it: what, from where, how far."""

    what: str
    """The state rebuilt, in words: "the state as of 2026-12-01T09:30:00Z"."""
    start: Position
    """Of the snapshot it starts from; ZERO for none."""
    share: float = 0.0
    """How far it has come, 0 to 1, in the log's events (`log_share`)."""

    def describe(self) -> str:
        whence = "zero" if self.start == ZERO else f"the snapshot at {self.start}"
        return f"{self.what} is being rebuilt from {whence}: {self.share:.0%} of the way there"

    def reached(self, share: float) -> None:
        self.share = share


def _what(upto: Position | None, skip: frozenset[str]) -> str:
    when = f" as of {_point(upto)}" if upto is not None else ""
    without = f" without {', '.join(sorted(skip))} events" if skip else ""
    return f"the state{when}{without}"


def _point(position: Position) -> str:
    """A position as it was most likely asked for: an ISO time stands for the last position
    of its millisecond."""
    if position.seq != MAX_PART:
        return str(position)
    return datetime.fromtimestamp(position.ms / 1000, UTC).isoformat().replace("+00:00", "Z")


class RebuildCache:
    def __init__(self, log: EventLog, snapshots: SnapshotStore) -> None:
        self._log = log
        self._snapshots = snapshots
        self._states: OrderedDict[Key, State] = OrderedDict()
        self._lock = threading.Lock()
        self._under_way: dict[str, Rebuilding] = {}
        """By tenant: read without the lock, which a rebuild holds throughout."""

    def under_way(self, tenant: str) -> Rebuilding | None:
        """The tenant's rebuild under way, if one is."""
        return self._under_way.get(tenant)

    @contextlib.contextmanager
    def state(self, tenant: str, upto: Position | None, skip: frozenset[str]) -> Iterator[State]:
        """The state of `tenant` up to `upto` (None: the log's end) without `skip` events;
        held by this caller alone until the block ends."""
        key = (tenant, self._log.epoch(tenant), upto, skip)
        with self._lock:
            state = self._states.pop(key, None)
            if state is not None and upto is None:
                fold_log(state, self._log, tenant, None, skip)
            if state is None:
                state = self._carried_on(key)
            if state is None:
                # The least recently read state goes before, not after: a new one then takes
                # up the memory it frees, which the first time it is touched cost a large
                # load twice its time.
                while len(self._states) >= KEPT:
                    self._states.popitem(last=False)
                state = self._rebuilt(tenant, upto, skip)
            self._states[key] = state  # in place of the one it was, if it was kept
            yield state

    def _rebuilt(self, tenant: str, upto: Position | None, skip: frozenset[str]) -> State:
        tell: Callable[[Position], None] | None = None

        def progress(state: State) -> None:
            nonlocal tell
            if tell is None:  # the first call: where it starts from
                under_way = self._under_way[tenant] = Rebuilding(_what(upto, skip), state.position)
                tell = log_share(
                    self._log, self._snapshots, tenant, upto, under_way.reached, state.position
                )
            tell(state.position)

        try:
            return rebuild(self._log, self._snapshots, tenant, Rebuild(upto, skip), progress)
        finally:
            self._under_way.pop(tenant, None)

    def _carried_on(self, key: Key) -> State | None:
        """The kept state of the latest point before `key`'s (not of the log's end, which is
        kept up to date), folded on to `key`'s point if that folds no more than a rebuild
        would; it is kept for that point from then on."""
        tenant, epoch, upto, skip = key
        if upto is None:
            return None
        earlier = [
            (state.position, kept)
            for kept, state in self._states.items()
            if kept[:2] == (tenant, epoch)
            and kept[2] is not None
            and kept[3] == skip
            and state.position <= upto
        ]
        if not earlier:
            return None
        _, kept = max(earlier, key=lambda found: found[0])
        if not folds_on(self._states[kept], self._snapshots, tenant, upto, skip):
            return None
        state = self._states.pop(kept)
        fold_log(state, self._log, tenant, upto, skip)
        return state
