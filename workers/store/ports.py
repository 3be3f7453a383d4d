"""The two stores everything runs on, as Protocols: the event log and the snapshot store.

Each has a Redis implementation (workers/store/redis/stores.py) and an in-memory
twin (workers/store/memory.py); one contract test suite runs against both
(tests/contract/test_stores.py). The application and the jobs see only these.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

import orjson

from assocmem.engine.errors import quoted
from assocmem.engine.position import Position
from assocmem.workers.errors import KeyConflict
from assocmem.workers.store.read_ahead import ReadAhead

if TYPE_CHECKING:  # the CLI reads settings (which name the ladder) without the fold
    from assocmem.engine.events.envelope import Event
    from assocmem.engine.events.fold import Rejection
    from assocmem.workers.store.archive import Segment

DEFAULT_BATCH = 1000
"""Entries read from the log per round trip."""

Entry = tuple[Position, bytes]
"""(position, encoded envelope) as stored in the log."""

STRAY_MARK = b"\x00"
"""Leads what a store gives for a log entry not stored as events are (by something other
than assocmem): a JSON object of the fields it holds instead. No envelope starts so; the
fold rejects it with a reason naming those fields, and a dead letter shows them."""


def stray_entry(fields: dict[bytes, bytes]) -> bytes:
    named = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in fields.items()}
    return STRAY_MARK + orjson.dumps(named)


def stray_reason(raw: bytes, position: Position) -> str | None:
    """Why the entry at `position` is no event, if it is a stray one (else None)."""
    if not raw.startswith(STRAY_MARK):
        return None
    try:
        names = list(orjson.loads(raw[len(STRAY_MARK) :]))
    except orjson.JSONDecodeError:
        return None  # a field "e" whose value happens to start so
    held = ", ".join(map(quoted, names)) if names else "no field"
    return f'the entry at {position} holds {held}, not the one field "e" an event is stored in'


@dataclasses.dataclass(frozen=True, slots=True)
class Appended:
    position: Position
    is_duplicate: bool
    """An event with this idempotency key was appended before: `position` is the first's."""
    previous: Position | None = None
    """The entry just before it in the log when it was stored (ZERO for a log's first);
    None for a duplicate. A state folded up to `previous` can take the event as it is."""


class EventLog(Protocol):
    """One ordered log per tenant, plus what the fold needs beside it."""

    def append(self, tenant: str, events: list[Event]) -> list[Appended]:
        """Append `events` atomically, in order; register the tenant and flag a fold, in the
        same step. An event whose idempotency key was seen before is not stored again."""
        ...

    def append_at(self, tenant: str, entries: list[Entry]) -> bool:
        """Append entries at the positions they name (ascending), atomically, if every one
        comes after the log's end (an import keeping its source's positions); False, with
        nothing appended, otherwise."""
        ...

    def append_raw(self, tenant: str, raw: bytes) -> Position:
        """Append an entry as given, unchecked (tests, repairs): the fold must survive it."""
        ...

    def entries(
        self, tenant: str, after: Position, upto: Position | None = None, count: int = DEFAULT_BATCH
    ) -> list[Entry]:
        """Up to `count` entries strictly after `after`, up to and including `upto`."""
        ...

    def entries_at(self, tenant: str, positions: list[Position]) -> list[Entry]:
        """The entries at `positions` (ascending) that the log holds, in order: an erased
        or unknown position has none."""
        ...

    def wait_for_entries(self, tenant: str, after: Position, timeout: float) -> bool:
        """Block until the log has an entry after `after` or `timeout` seconds pass."""
        ...

    def last_position(self, tenant: str) -> Position | None: ...

    def has(self, tenant: str, position: Position) -> bool:
        """Whether the log holds an entry at `position`."""
        ...

    def length(self, tenant: str) -> int:
        """Entries in the log, archived ones included."""
        ...

    def archive(self, tenant: str, upto: Position, limit: int) -> Segment | None:
        """Move up to `limit` of the oldest entries at or before `upto` into one archive
        segment (recorded first, then taken off the log); None when there are none."""
        ...

    def segments(self, tenant: str) -> list[Segment]:
        """The archive's manifest, oldest segment first."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant that ever appended, sorted."""
        ...

    def fold_wanted(self, tenant: str) -> int:
        """The fold flag's mark: 0 when no fold is wanted, else a count that every append
        (and `want_fold`) raises."""
        ...

    def want_fold(self, tenant: str) -> None: ...

    def fold_due(self, tenant: str) -> float | None:
        """When the events folded but in no snapshot will have waited long enough to be
        published however few they are (the runtime's clock); None if nothing waits."""
        ...

    def set_fold_due(self, tenant: str, at: float | None) -> None: ...

    def tenants_to_fold(self, now: float) -> list[str]:
        """The tenants whose fold is wanted, or whose snapshot is due at `now`, read in a fixed
        number of round trips however many tenants there are (the scheduler asks several times a second)."""
        ...

    def clear_fold_wanted(self, tenant: str, mark: int) -> None:
        """Clear the flag if it still holds `mark`, read before a fold: an append since
        keeps it raised, and a fold that died before its end never clears it."""
        ...

    def epoch(self, tenant: str) -> int:
        """Raised each time the tenant's history is rewritten (an erasure): whoever caches
        what the log held reloads when it changes."""
        ...

    def rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        """Take out of the log and its archive every entry `keep` refuses, keeping the
        positions of the others and every entry appended meanwhile; raise the epoch.
        Returns the positions taken out."""
        ...

    def raise_epoch(self, tenant: str) -> None:
        """Make every cache of the tenant's history reload (see `epoch`)."""
        ...

    def forget_positions(self, tenant: str, positions: list[Position]) -> None:
        """Drop the dead letters and the idempotency keys of entries taken out."""
        ...

    def erase_tenant(self, tenant: str) -> int:
        """Delete everything of the tenant (log, archive, snapshots, dead letters, keys);
        raise its epoch. Returns the entries deleted."""
        ...

    def compact(self) -> None:
        """Rewrite the store's files (Redis's AOF) so none keeps what was deleted."""
        ...

    def add_dead_letters(self, tenant: str, rejections: list[Rejection]) -> None:
        """Record rejected events under their own positions: recording one twice keeps one."""
        ...

    def dead_letters(self, tenant: str, limit: int | None = None) -> list[Rejection]:
        """The oldest `limit` of them (None: all), oldest first."""
        ...

    def dead_letter_count(self, tenant: str) -> int: ...

    def ping(self) -> None:
        """Raise StoreUnavailable unless the store answers."""
        ...


class SnapshotStore(Protocol):
    """Immutable snapshot blobs named by position, and a `latest` pointer moved by
    compare-and-set; the newest `kept` are retained for as-of reads."""

    def latest_position(self, tenant: str) -> Position | None: ...

    def load(self, tenant: str, position: Position) -> bytes | None: ...

    def size(self, tenant: str, position: Position) -> int:
        """Bytes of the snapshot at `position` (0 if there is none)."""
        ...

    def positions(self, tenant: str) -> list[Position]:
        """Retained snapshots, oldest first."""
        ...

    def starts(self, tenant: str) -> list[Position]:
        """Where a rebuild may start from, oldest first: the retained snapshots, and those
        kept elsewhere (workers/store/snapshot_rungs.py), which `load` reads too."""
        ...

    def publish(
        self,
        tenant: str,
        blob: bytes,
        position: Position,
        expected: Position | None,
        base: Position | None = None,
        folded: int = 0,
    ) -> bool:
        """Publish `blob` as the state at `position` if `latest` is still `expected`. A delta
        names its `base`: that snapshot is kept while this one is (at least two are kept).
        `folded`: the log entries folded into it, counted from the tenant's first snapshot
        (or its last erasure), which spaces the ladder's rungs in events. At `expected`
        itself, it replaces that snapshot (a readable copy of one that is not)."""
        ...

    def keeps(self, tenant: str, folded: int) -> bool:
        """Whether a snapshot of `folded` events would be kept for as-of reads though it is
        not published (workers/store/snapshot_rungs.py); False for a store that keeps none."""
        ...

    def keep(
        self, tenant: str, blob: bytes, position: Position, base: Position, folded: int
    ) -> None:
        """Keep a delta of the published snapshot at `base` for as-of reads, unpublished."""
        ...

    def folded(self, tenant: str, position: Position) -> int:
        """The `folded` count the snapshot at `position` was published (or kept) with (0 if
        none)."""
        ...

    def digest(self, tenant: str, position: Position) -> str | None:
        """`snapshot_digest` of the full snapshot at `position`; None for a delta, for none,
        and for one published before digests were kept."""
        ...

    def drop(self, tenant: str) -> None:
        """Forget every snapshot of `tenant` (the next fold starts from zero)."""
        ...


class RetainedOnly:
    """The part of a SnapshotStore that keeps no snapshot beyond those it retains: a
    rebuild starts only from them."""

    def starts(self: SnapshotStore, tenant: str) -> list[Position]:
        return self.positions(tenant)

    def keeps(self, tenant: str, folded: int) -> bool:
        return False

    def keep(
        self, tenant: str, blob: bytes, position: Position, base: Position, folded: int
    ) -> None:
        return None


class WrappedSnapshotStore:
    """A SnapshotStore that hands every call to `inner`, for one that adds to some of them
    (workers/state/snapshot_cache.py, workers/store/snapshot_rungs.py)."""

    def __init__(self, inner: SnapshotStore) -> None:
        self.inner = inner

    def latest_position(self, tenant: str) -> Position | None:
        return self.inner.latest_position(tenant)

    def load(self, tenant: str, position: Position) -> bytes | None:
        return self.inner.load(tenant, position)

    def size(self, tenant: str, position: Position) -> int:
        return self.inner.size(tenant, position)

    def positions(self, tenant: str) -> list[Position]:
        return self.inner.positions(tenant)

    def starts(self, tenant: str) -> list[Position]:
        return self.inner.starts(tenant)

    def keeps(self, tenant: str, folded: int) -> bool:
        return self.inner.keeps(tenant, folded)

    def keep(
        self, tenant: str, blob: bytes, position: Position, base: Position, folded: int
    ) -> None:
        self.inner.keep(tenant, blob, position, base, folded)

    def folded(self, tenant: str, position: Position) -> int:
        return self.inner.folded(tenant, position)

    def digest(self, tenant: str, position: Position) -> str | None:
        return self.inner.digest(tenant, position)

    def publish(
        self,
        tenant: str,
        blob: bytes,
        position: Position,
        expected: Position | None,
        base: Position | None = None,
        folded: int = 0,
    ) -> bool:
        published = self.inner.publish(tenant, blob, position, expected, base, folded)
        if published:
            self.published(tenant, blob, position, base, folded)
        return published

    def drop(self, tenant: str) -> None:
        self.inner.drop(tenant)
        self.dropped(tenant)  # after the keys: what a wrapper saved meanwhile goes too

    def published(
        self, tenant: str, blob: bytes, position: Position, base: Position | None, folded: int
    ) -> None:
        """What the wrapper adds once `inner` published `blob` (nothing here)."""

    def dropped(self, tenant: str) -> None:
        """What the wrapper adds once `inner` dropped the tenant's snapshots (nothing here)."""


def snapshot_digest(blob: bytes) -> str:
    """What tells two snapshots' bytes apart without comparing them: SHA-256, a small part
    of a publish."""
    return hashlib.sha256(blob).hexdigest()


HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


@dataclasses.dataclass(frozen=True, slots=True)
class Ladder:
    """Which snapshots a tenant keeps: both stores ask `dropped_by_publish` what to drop."""

    recent: int = 4
    """The newest ones."""
    hourly: int = 24
    """The newest of each hour, for this many hours back from the newest snapshot."""
    daily: int = 30
    """The newest of each day, for this many days back."""
    stride: int = 0
    """The newest of each run of this many events folded (0: none), so that an `as_of`
    read folds at most about this many events after the snapshot it starts from, however
    fast the log was written: the hourly rung alone keeps one snapshot for an hour of
    writes, and a rebuild in that hour folds from the one before it. Off by default, for
    what it costs: every run kept is a full snapshot in Redis's memory, loaded at every
    start; the rungs on disk (workers/store/snapshot_rungs.py) do the same for disk only."""
    strides: int = 10
    """... for this many runs back from the newest snapshot."""

    def retained(
        self,
        positions: list[Position],
        bases: dict[Position, Position],
        folded: dict[Position, int] | None = None,
    ) -> set[Position]:
        """The positions (in publish order) to keep, and the bases of the deltas kept (and
        theirs: a small delta's delta and its full snapshot). `folded`: each one's count
        of events folded (none: 0)."""
        if not positions:
            return set()
        keep = set(positions[-self.recent :]) if self.recent else set()
        counts = folded or {}
        rungs: list[tuple[Callable[[Position], int], int, int]] = [
            (lambda p: p.ms, HOUR_MS, self.hourly),
            (lambda p: p.ms, DAY_MS, self.daily),
        ]
        if self.stride:
            rungs.append((lambda p: counts.get(p, 0), self.stride, self.strides))
        for measure, span, count in rungs:
            newest = measure(positions[-1])
            seen: set[int] = set()
            for position in reversed(positions):
                at = measure(position)
                bucket = at // span
                if newest - at < count * span and bucket not in seen:
                    seen.add(bucket)
                    keep.add(position)
        for position in reversed(positions):  # a base is older than its deltas
            if position in keep and position in bases:
                keep.add(bases[position])
        return keep

    def dropped_by_publish(
        self,
        ladder: list[Position],
        bases: dict[Position, Position],
        folded: dict[Position, int],
        published: Position,
        base: Position | None,
        events: int,
    ) -> list[Position]:
        """The snapshots of `ladder` (publish order, their bases and counts of events
        folded) that publishing `published` (a delta of `base`, or full) leaves unkept."""
        after = [p for p in ladder if p != published] + [published]
        bases = {p: b for p, b in bases.items() if p != published}
        if base is not None:
            bases[published] = base
        keep = self.retained(after, bases, {**folded, published: events})
        return [p for p in after if p not in keep]


DEFAULT_LADDER = Ladder()


def key_conflict(key: str) -> KeyConflict:
    return KeyConflict(
        f"key {quoted(key)} was used before with another body: expected the same body"
        " (a retry), or a new key"
    )


def iter_entries(
    log: EventLog,
    tenant: str,
    after: Position,
    upto: Position | None = None,
    batch: int = DEFAULT_BATCH,
) -> Iterator[list[Entry]]:
    """Every entry after `after`, in batches, following the log as it is read. After a
    whole batch, the next ones are read ahead, in a thread (workers/store/read_ahead.py)."""
    chunk = log.entries(tenant, after, upto, batch)
    if len(chunk) < batch:
        if chunk:
            yield chunk
        return
    ahead = ReadAhead(lambda start: log.entries(tenant, start, upto, batch), chunk[-1][0], batch)
    try:
        yield chunk
        yield from ahead
    finally:  # also when the caller stops early
        ahead.close()


def published_snapshot(store: SnapshotStore, tenant: str, position: Position) -> bytes | None:
    """The bytes published at `position`, to be copied as they are: not the file of a rung,
    kept unpacked or without its rows (workers/store/snapshot_rungs.py), which `load` may
    give instead."""
    while isinstance(store, WrappedSnapshotStore):
        store = store.inner
    return store.load(tenant, position)


def latest_snapshot(store: SnapshotStore, tenant: str) -> tuple[Position, bytes] | None:
    position = store.latest_position(tenant)
    blob = store.load(tenant, position) if position else None
    return (position, blob) if position and blob else None


def snapshot_position_at_or_before(
    store: SnapshotStore, tenant: str, position: Position
) -> Position | None:
    """The position of the newest snapshot at or before `position` a rebuild may start
    from, not loaded."""
    return max((p for p in store.starts(tenant) if p <= position), default=None)


def snapshots_at_or_before(
    store: SnapshotStore, tenant: str, position: Position
) -> Iterator[tuple[Position, bytes]]:
    """The snapshots a rebuild may start from folded up to `position` or earlier, newest
    first, each loaded as it is asked for."""
    for candidate in sorted(store.starts(tenant), reverse=True):
        if candidate <= position:
            blob = store.load(tenant, candidate)
            if blob:
                yield candidate, blob
