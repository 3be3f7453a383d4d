"""The stores in process memory: the twins of workers/store/redis/stores.py, for tests and for running
the application and the jobs without Redis. Positions come from an injected clock, as
Redis makes them: milliseconds, then a sequence number within the same millisecond."""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable

import orjson

from assocmem.engine.events.envelope import Event, encode_event
from assocmem.engine.events.fold import Rejection
from assocmem.engine.position import ZERO, Position
from assocmem.workers.store.archive import (
    Segment,
    archived_at,
    archived_entries,
    decode_segment,
    encode_segment,
)
from assocmem.workers.store.ports import (
    DEFAULT_BATCH,
    DEFAULT_LADDER,
    Appended,
    Entry,
    Ladder,
    RetainedOnly,
    key_conflict,
    snapshot_digest,
)


class InMemoryEventLog:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._logs: dict[str, list[Entry]] = {}
        self._keys: dict[tuple[str, str], tuple[Position, str | None]] = {}
        self._wanted: dict[str, int] = {}
        self._due: dict[str, float] = {}
        self._dead: dict[str, dict[Position, str]] = {}
        self._archived: dict[str, list[tuple[Segment, bytes]]] = {}
        self._epochs: dict[str, int] = {}
        self._changed = threading.Condition()

    def append(self, tenant: str, events: list[Event]) -> list[Appended]:
        appended = []
        with self._changed:
            for event in events:
                seen = self._keys.get((tenant, event.key)) if event.key else None
                if seen is not None and seen[1] != event.fingerprint:
                    raise key_conflict(event.key or "")
            for event in events:
                seen = self._keys.get((tenant, event.key)) if event.key else None
                if seen is not None:
                    appended.append(Appended(seen[0], True))
                    continue
                log = self._logs.get(tenant)
                previous = log[-1][0] if log else ZERO
                position = self._add(tenant, encode_event(event))
                if event.key:
                    self._keys[(tenant, event.key)] = (position, event.fingerprint)
                appended.append(Appended(position, False, previous))
            if events:
                self.want_fold(tenant)
            self._changed.notify_all()
        return appended

    def append_at(self, tenant: str, entries: list[Entry]) -> bool:
        with self._changed:
            log = self._logs.setdefault(tenant, [])
            if log and entries[0][0] <= log[-1][0]:
                return False
            log.extend(entries)
            self.want_fold(tenant)
            self._changed.notify_all()
        return True

    def append_raw(self, tenant: str, raw: bytes) -> Position:
        with self._changed:
            position = self._add(tenant, raw)
            self.want_fold(tenant)
            self._changed.notify_all()
        return position

    def _add(self, tenant: str, raw: bytes) -> Position:
        log = self._logs.setdefault(tenant, [])
        last = log[-1][0] if log else ZERO
        ms = int(self._clock() * 1000)
        position = Position(ms, 0) if ms > last.ms else Position(last.ms, last.seq + 1)
        log.append((position, raw))
        return position

    def entries(
        self, tenant: str, after: Position, upto: Position | None = None, count: int = DEFAULT_BATCH
    ) -> list[Entry]:
        with self._changed:
            found = archived_entries(self.segments(tenant), self._load(tenant), after, upto, count)
            log = self._logs.get(tenant, [])
            start = bisect.bisect_right(log, after, key=lambda entry: entry[0])
            chunk = log[start : start + count - len(found)]
        return found + [e for e in chunk if upto is None or e[0] <= upto]

    def entries_at(self, tenant: str, positions: list[Position]) -> list[Entry]:
        with self._changed:
            found = archived_at(self.segments(tenant), self._load(tenant), positions)
            log = self._logs.get(tenant, [])
            for position in positions:
                at = bisect.bisect_left(log, position, key=lambda entry: entry[0])
                if at < len(log) and log[at][0] == position:
                    found.append(log[at])
        return found

    def wait_for_entries(self, tenant: str, after: Position, timeout: float) -> bool:
        def arrived() -> bool:
            log = self._logs.get(tenant, [])
            return bool(log) and log[-1][0] > after

        with self._changed:
            return self._changed.wait_for(arrived, timeout)

    def last_position(self, tenant: str) -> Position | None:
        log = self._logs.get(tenant)
        segments = self.segments(tenant)
        return log[-1][0] if log else segments[-1].last if segments else None

    def has(self, tenant: str, position: Position) -> bool:
        return bool(self.entries_at(tenant, [position]))

    def length(self, tenant: str) -> int:
        return len(self._logs.get(tenant, [])) + sum(s.count for s in self.segments(tenant))

    def archive(self, tenant: str, upto: Position, limit: int) -> Segment | None:
        with self._changed:
            log = self._logs.get(tenant, [])
            end = bisect.bisect_right(log, upto, key=lambda entry: entry[0])
            taken = log[: min(end, limit)]
            if not taken:
                return None
            segment, blob = encode_segment(taken)
            self._archived.setdefault(tenant, []).append((segment, blob))
            del log[: len(taken)]
            return segment

    def segments(self, tenant: str) -> list[Segment]:
        return [segment for segment, _ in self._archived.get(tenant, [])]

    def _load(self, tenant: str) -> Callable[[Segment], list[Entry]]:
        blobs = {segment.first: blob for segment, blob in self._archived.get(tenant, [])}
        return lambda segment: decode_segment(segment, blobs.get(segment.first))

    def tenants(self) -> list[str]:
        return sorted(self._logs)

    def fold_wanted(self, tenant: str) -> int:
        return self._wanted.get(tenant, 0)

    def want_fold(self, tenant: str) -> None:
        self._wanted[tenant] = self._wanted.get(tenant, 0) + 1

    def fold_due(self, tenant: str) -> float | None:
        return self._due.get(tenant)

    def tenants_to_fold(self, now: float) -> list[str]:
        def due(tenant: str) -> bool:
            at = self.fold_due(tenant)
            return at is not None and at <= now

        return [t for t in self.tenants() if self.fold_wanted(t) or due(t)]

    def set_fold_due(self, tenant: str, at: float | None) -> None:
        if at is None:
            self._due.pop(tenant, None)
        else:
            self._due[tenant] = at

    def clear_fold_wanted(self, tenant: str, mark: int) -> None:
        if self._wanted.get(tenant) == mark:
            del self._wanted[tenant]

    def epoch(self, tenant: str) -> int:
        return self._epochs.get(tenant, 0)

    def rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        with self._changed:
            removed = []
            segments = []
            for segment, blob in self._archived.get(tenant, []):
                entries = decode_segment(segment, blob)
                kept = [e for e in entries if keep(e)]
                still = {p for p, _ in kept}
                removed += [p for p, _ in entries if p not in still]
                if kept:
                    segments.append(
                        encode_segment(kept) if len(kept) < len(entries) else (segment, blob)
                    )
            if tenant in self._archived:
                self._archived[tenant] = segments
            before = list(self._logs.get(tenant, []))
            verdicts = [keep(entry) for entry in before]  # may append: kept as they come
            meanwhile = self._logs.get(tenant, [])[len(before) :]
            removed += [p for (p, _), kept_it in zip(before, verdicts, strict=True) if not kept_it]
            kept_entries = [e for e, kept_it in zip(before, verdicts, strict=True) if kept_it]
            self._logs[tenant] = kept_entries + meanwhile
            self._epochs[tenant] = self.epoch(tenant) + 1
            return removed

    def raise_epoch(self, tenant: str) -> None:
        self._epochs[tenant] = self.epoch(tenant) + 1

    def forget_positions(self, tenant: str, positions: list[Position]) -> None:
        gone = set(positions)
        dead = self._dead.get(tenant, {})
        for position in gone & set(dead):
            del dead[position]
        for name in [k for k, (p, _) in self._keys.items() if k[0] == tenant and p in gone]:
            del self._keys[name]

    def erase_tenant(self, tenant: str) -> int:
        with self._changed:
            entries = len(self._logs.pop(tenant, [])) + sum(
                s.count for s, _ in self._archived.pop(tenant, [])
            )
            self._dead.pop(tenant, None)
            self._wanted.pop(tenant, None)
            for name in [k for k in self._keys if k[0] == tenant]:
                del self._keys[name]
            self._epochs[tenant] = self.epoch(tenant) + 1
            return entries

    def compact(self) -> None:
        """Nothing is on disk."""

    def add_dead_letters(self, tenant: str, rejections: list[Rejection]) -> None:
        dead = self._dead.setdefault(tenant, {})
        for rejection in rejections:
            # The reason goes through JSON as the Redis twin stores it.
            dead.setdefault(rejection.position, orjson.loads(orjson.dumps(rejection.reason)))

    def dead_letters(self, tenant: str, limit: int | None = None) -> list[Rejection]:
        return [Rejection(p, r) for p, r in sorted(self._dead.get(tenant, {}).items())][:limit]

    def dead_letter_count(self, tenant: str) -> int:
        return len(self._dead.get(tenant, {}))

    def ping(self) -> None:
        return None


class InMemorySnapshotStore(RetainedOnly):
    def __init__(self, ladder: Ladder = DEFAULT_LADDER) -> None:
        self._rule = ladder
        self._bases: dict[str, dict[Position, Position]] = {}
        self._folded: dict[str, dict[Position, int]] = {}
        self._blobs: dict[str, dict[Position, bytes]] = {}
        self._ladder: dict[str, list[Position]] = {}
        self._latest: dict[str, Position] = {}
        self._lock = threading.Lock()

    def latest_position(self, tenant: str) -> Position | None:
        return self._latest.get(tenant)

    def size(self, tenant: str, position: Position) -> int:
        return len(self._blobs.get(tenant, {}).get(position, b""))

    def load(self, tenant: str, position: Position) -> bytes | None:
        return self._blobs.get(tenant, {}).get(position)

    def positions(self, tenant: str) -> list[Position]:
        return list(self._ladder.get(tenant, []))

    def folded(self, tenant: str, position: Position) -> int:
        return self._folded.get(tenant, {}).get(position, 0)

    def digest(self, tenant: str, position: Position) -> str | None:
        blob = self.load(tenant, position)
        full = blob is not None and position not in self._bases.get(tenant, {})
        return snapshot_digest(blob) if full else None  # type: ignore[arg-type]

    def publish(
        self,
        tenant: str,
        blob: bytes,
        position: Position,
        expected: Position | None,
        base: Position | None = None,
        folded: int = 0,
    ) -> bool:
        with self._lock:
            if self._latest.get(tenant) != expected:
                return False
            blobs = self._blobs.setdefault(tenant, {})
            ladder = self._ladder.setdefault(tenant, [])
            bases = self._bases.setdefault(tenant, {})
            counts = self._folded.setdefault(tenant, {})
            dropped = self._rule.dropped_by_publish(ladder, bases, counts, position, base, folded)
            if position == expected:  # replaced
                ladder.remove(position)
                bases.pop(position, None)
            blobs[position] = blob
            self._latest[tenant] = position
            ladder.append(position)
            if base is not None:
                bases[position] = base
            counts[position] = folded
            for old in dropped:
                blobs.pop(old, None)
                bases.pop(old, None)
                counts.pop(old, None)
                ladder.remove(old)
            return True

    def drop(self, tenant: str) -> None:
        with self._lock:
            self._blobs.pop(tenant, None)
            self._ladder.pop(tenant, None)
            self._latest.pop(tenant, None)
            self._bases.pop(tenant, None)
            self._folded.pop(tenant, None)
