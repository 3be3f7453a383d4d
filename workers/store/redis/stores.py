"""The stores on Redis: one stream per tenant (append is one Lua call per batch), snapshot
blobs with a `latest` pointer moved by a compare-and-set script.

Redis errors become StoreError here (through redis_errors.translated) and nowhere else.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar

import orjson
import redis
from redis.commands.core import Script

from assocmem.engine.events.envelope import Event, encode_event
from assocmem.engine.events.fold import Rejection
from assocmem.engine.position import Position
from assocmem.workers.errors import StoreError, StoreUnavailable
from assocmem.workers.store.archive import Segment, next_position
from assocmem.workers.store.ports import (
    DEFAULT_BATCH,
    DEFAULT_LADDER,
    Appended,
    Entry,
    Ladder,
    RetainedOnly,
    key_conflict,
    snapshot_digest,
    stray_entry,
)
from assocmem.workers.store.redis.archive import RedisArchive
from assocmem.workers.store.redis.connect import get_many, node_of, refresh_topology, twin
from assocmem.workers.store.redis.errors import translated
from assocmem.workers.store.redis.keys import (
    acked_key,
    archive_meta_key,
    dead_letter_key,
    epoch_key,
    fold_due_key,
    fold_wanted_key,
    idempotency_key,
    latest_snapshot_key,
    log_key,
    seen_key,
    seen_keys_state_key,
    snapshot_bases_key,
    snapshot_digests_key,
    snapshot_folded_key,
    snapshot_key,
    snapshot_ladder_key,
    tenants_key,
)
from assocmem.workers.store.redis.rewrite import RedisRewriter

T = TypeVar("T")

CLEAR_FLAG = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
"""
"""Clear a fold flag only if it still holds the mark the fold read."""


MOVING = ("MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN")
"""A cluster's answers while a slot changes hands (a failover): the write did not happen."""
PUBLISH_ATTEMPTS = 5
"""Reads of the ladder a publish makes, should it change under each (an erasure's drop)."""

_GENERATION = re.compile(r"GENERATION (\d+)")


def _script(client: redis.Redis, name: str) -> Script:
    return client.register_script(resources.files(__package__).joinpath(name).read_text())


class RedisEventLog:
    def __init__(
        self,
        client: redis.Redis,
        idempotency_ttl: int = 7 * 24 * 3600,
        replicas: int = 0,
        replica_wait_ms: int = 2000,
    ) -> None:
        """`replicas`: an append is acknowledged only once that many replicas hold it (and
        all before it): WAIT on the connection that wrote it, so a failover cannot lose it."""
        self._client = client
        self._replicas = replicas
        self._replica_wait_ms = replica_wait_ms
        # The log's reads: XRANGE replies as hiredis parses them, without redis-py making
        # a dict of each entry's fields (an eighth of an audit's time, before).
        self._reader = twin(client)
        self._reader.set_response_callback("XRANGE", _as_parsed)
        self._ttl = idempotency_ttl
        self._generation = int(time.time()) // idempotency_ttl
        """Of the seen keys' buckets: Redis's clock decides, and corrects this one."""
        self._append = _script(client, "append.lua")
        self._append_at = _script(client, "append_at.lua")
        self._clear_flag = client.register_script(CLEAR_FLAG)
        self._archive = RedisArchive(client)
        self._rewriter = RedisRewriter(client, self._archive)

    def append(self, tenant: str, events: list[Event]) -> list[Appended]:
        if not events:
            return []
        try:
            with translated(f"append to the log of {tenant!r}"):
                try:
                    rows = self._appended(tenant, events)
                except redis.ResponseError as exc:
                    named = _GENERATION.search(str(exc))
                    if named is None:
                        raise
                    # Redis's clock has moved on to another generation of seen keys
                    self._generation = int(named.group(1))
                    rows = self._appended(tenant, events)
        except StoreError as exc:
            if "KEYCONFLICT" not in str(exc):
                raise
            index = int(str(exc).rsplit("KEYCONFLICT", 1)[1].split()[0]) - 1
            raise key_conflict(events[index].key or "") from None
        return [_appended(*row) for row in rows]

    def _appended(self, tenant: str, events: list[Event]) -> list[Any]:
        """The tenant registered, then the batch appended, in one round trip."""
        generation = self._generation
        keys = [log_key(tenant), fold_wanted_key(tenant), seen_keys_state_key(tenant)]
        args: list[str | bytes | int] = [len(events), self._ttl, generation]
        for event in events:
            first = 0
            if event.key:
                first = len(keys) + 1
                keys += [
                    seen_key(tenant, event.key, generation),
                    seen_key(tenant, event.key, generation - 1),
                    idempotency_key(tenant, event.key),
                ]
            args += [encode_event(event), first, event.fingerprint or "-", event.key or ""]
        try:
            return self._registered_and_appended(tenant, keys, args)
        except redis.exceptions.NoScriptError:  # Redis restarted, or its scripts flushed
            self._client.script_load(self._append.script)
            return self._registered_and_appended(tenant, keys, args)

    def _registered_and_appended(
        self, tenant: str, keys: list[str], args: list[str | bytes | int]
    ) -> list[Any]:
        # Registered first: a tenant with events is never missing from the registry, which
        # lives in a slot of its own (the script touches only the tenant's keys).
        if self._replicas:
            self._client.sadd(tenants_key(), tenant)
            return self._replicated(tenant, keys, args)
        with self._client.pipeline(transaction=False) as pipe:
            pipe.sadd(tenants_key(), tenant)
            pipe.evalsha(self._append.sha, len(keys), *keys, *args)
            return pipe.execute()[1]  # type: ignore[no-any-return]

    def _replicated(self, tenant: str, keys: list[str], args: list[str | bytes | int]) -> Any:
        """The append, then WAIT on its very connection (WAIT counts the writes of its own
        client). A write of the tenant's slot first: a batch already stored (a resend) writes
        nothing, and its first attempt may not have reached a replica before its master died."""
        node = node_of(self._client, log_key(tenant))
        try:
            with node.pipeline(transaction=False) as pipe:
                pipe.evalsha(self._append.sha, len(keys), *keys, *args)
                pipe.incr(acked_key(tenant))
                pipe.execute_command("WAIT", self._replicas, self._replica_wait_ms)
                rows, _, held = pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError):
            refresh_topology(self._client)  # a failover: the next try finds the new master
            raise
        except redis.ResponseError as exc:
            if not str(exc).startswith(MOVING):
                raise
            refresh_topology(self._client)
            raise StoreUnavailable(f"the slot of {tenant!r} moves: {exc}; try again") from exc
        if int(held) < self._replicas:
            raise StoreUnavailable(
                f"the append to {tenant!r} reached {held} of {self._replicas} replicas within"
                f" {self._replica_wait_ms} ms: not acknowledged; send it again (an idempotency"
                " key makes it count once)"
            )
        return rows

    def append_at(self, tenant: str, entries: list[Entry]) -> bool:
        args: list[str | bytes] = []
        for position, raw in entries:
            args += [str(position), raw]
        with translated(f"append to the log of {tenant!r}"):
            self._client.sadd(tenants_key(), tenant)
            return bool(self._append_at(keys=[log_key(tenant), fold_wanted_key(tenant)], args=args))

    def append_raw(self, tenant: str, raw: bytes) -> Position:
        with translated(f"append to the log of {tenant!r}"):
            position = self._client.xadd(log_key(tenant), {"e": raw})
            self._client.sadd(tenants_key(), tenant)
            self._client.incr(fold_wanted_key(tenant))
        return Position.parse(position)

    def entries(
        self, tenant: str, after: Position, upto: Position | None = None, count: int = DEFAULT_BATCH
    ) -> list[Entry]:
        with translated(f"read the log of {tenant!r}"):
            with self._reader.pipeline(transaction=False) as pipe:
                pipe.hget(archive_meta_key(tenant), "upto")
                pipe.xrange(
                    log_key(tenant), min=f"({after}", max=str(upto) if upto else "+", count=count
                )
                archived, rows = pipe.execute()
            if not archived or after >= Position.parse(archived):
                return _stored_entries(rows)
            # The head of the log is archived: read it there, then the stream after it.
            archived_upto = Position.parse(archived)
            found = self._archive.read(tenant, after, upto, count)
            if len(found) < count and (upto is None or archived_upto < upto):
                rows = self._reader.xrange(
                    log_key(tenant),
                    min=f"({archived_upto}",
                    max=str(upto) if upto else "+",
                    count=count - len(found),
                )
                found += _stored_entries(rows)
            return found

    def entries_at(self, tenant: str, positions: list[Position]) -> list[Entry]:
        """An XRANGE of one position each, pipelined a thousand at a time; archived
        positions from their segments."""
        key = log_key(tenant)
        with translated(f"read the log of {tenant!r}"):
            archived_upto = self._archive.upto(tenant) if positions else None
            split = bisect.bisect_right(positions, archived_upto) if archived_upto else 0
            found = self._archive.at(tenant, positions[:split]) if split else []
            for start in range(split, len(positions), DEFAULT_BATCH):
                with self._reader.pipeline(transaction=False) as pipe:
                    for position in positions[start : start + DEFAULT_BATCH]:
                        pipe.xrange(key, min=str(position), max=str(position))
                    for rows in pipe.execute():
                        found += _stored_entries(rows)
        return found

    def wait_for_entries(self, tenant: str, after: Position, timeout: float) -> bool:
        with translated(f"read the log of {tenant!r}"):
            rows = self._client.xread(
                {log_key(tenant): str(after)}, count=1, block=int(timeout * 1000)
            )
        return bool(rows)

    def last_position(self, tenant: str) -> Position | None:
        with translated(f"read the log of {tenant!r}"):
            rows = self._client.xrevrange(log_key(tenant), count=1)
            return Position.parse(rows[0][0]) if rows else self._archive.upto(tenant)

    def has(self, tenant: str, position: Position) -> bool:
        with translated(f"read the log of {tenant!r}"):
            if self._client.xrange(log_key(tenant), str(position), str(position)):
                return True
            archived = self._archive.upto(tenant)
            return (
                archived is not None
                and position <= archived
                and self._archive.holds(tenant, position)
            )

    def length(self, tenant: str) -> int:
        with translated(f"read the log of {tenant!r}"):
            return int(self._client.xlen(log_key(tenant))) + self._archive.count(tenant)

    def archive(self, tenant: str, upto: Position, limit: int) -> Segment | None:
        with translated(f"archive the log of {tenant!r}"):
            archived = self._archive.upto(tenant)
            if archived is not None:  # a trim a crash cut short
                self._client.xtrim(
                    log_key(tenant), minid=str(next_position(archived)), approximate=False
                )
            rows = self._reader.xrange(
                log_key(tenant),
                min=f"({archived}" if archived else "-",
                max=str(upto),
                count=limit,
            )
            if not rows:
                return None
            segment = self._archive.add(tenant, _stored_entries(rows), archived)
            self._client.xtrim(
                log_key(tenant), minid=str(next_position(segment.last)), approximate=False
            )
            return segment

    def segments(self, tenant: str) -> list[Segment]:
        with translated(f"read the archive of {tenant!r}"):
            return self._archive.segments(tenant)

    def tenants(self) -> list[str]:
        with translated("list the tenants"):
            return sorted(t.decode() for t in self._client.smembers(tenants_key()))

    def fold_wanted(self, tenant: str) -> int:
        with translated(f"read the fold flag of {tenant!r}"):
            return int(self._client.get(fold_wanted_key(tenant)) or 0)

    def want_fold(self, tenant: str) -> None:
        with translated(f"set the fold flag of {tenant!r}"):
            self._client.incr(fold_wanted_key(tenant))

    def fold_due(self, tenant: str) -> float | None:
        with translated(f"read when a snapshot of {tenant!r} falls due"):
            raw = self._client.get(fold_due_key(tenant))
        return float(raw) if raw is not None else None

    def tenants_to_fold(self, now: float) -> list[str]:
        tenants = self.tenants()
        if not tenants:
            return []
        with translated("read the fold flags"):
            keys = [fold_wanted_key(t) for t in tenants] + [fold_due_key(t) for t in tenants]
            found = get_many(self._client, keys)
            wanted, due = found[: len(tenants)], found[len(tenants) :]
        return [
            tenant
            for tenant, mark, at in zip(tenants, wanted, due, strict=True)
            if int(mark or 0) or (at is not None and float(at) <= now)
        ]

    def set_fold_due(self, tenant: str, at: float | None) -> None:
        with translated(f"record when a snapshot of {tenant!r} falls due"):
            if at is None:
                self._client.delete(fold_due_key(tenant))
            else:
                self._client.set(fold_due_key(tenant), repr(at))

    def clear_fold_wanted(self, tenant: str, mark: int) -> None:
        with translated(f"clear the fold flag of {tenant!r}"):
            self._clear_flag(keys=[fold_wanted_key(tenant)], args=[mark])

    def epoch(self, tenant: str) -> int:
        with translated(f"read the epoch of {tenant!r}"):
            return int(self._client.get(epoch_key(tenant)) or 0)

    def rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        with translated(f"rewrite the log of {tenant!r}"):
            return self._rewriter.rewrite(tenant, keep)

    def raise_epoch(self, tenant: str) -> None:
        with translated(f"raise the epoch of {tenant!r}"):
            self._client.incr(epoch_key(tenant))

    def forget_positions(self, tenant: str, positions: list[Position]) -> None:
        with translated(f"drop the keys of erased entries of {tenant!r}"):
            self._rewriter.forget_positions(tenant, positions)

    def erase_tenant(self, tenant: str) -> int:
        with translated(f"erase the tenant {tenant!r}"):
            return self._rewriter.erase_tenant(tenant)

    def compact(self) -> None:
        with translated("rewrite the AOF"):
            self._rewriter.compact()

    def add_dead_letters(self, tenant: str, rejections: list[Rejection]) -> None:
        """One pipelined round trip for all (a flood of malformed entries took one each)."""
        if not rejections:
            return
        with translated(f"record the dead letters of {tenant!r}"):
            with self._client.pipeline(transaction=False) as pipe:
                for rejection in rejections:
                    fields = {"reason": orjson.dumps(rejection.reason)}
                    pipe.xadd(dead_letter_key(tenant), fields, id=str(rejection.position))
                answers = pipe.execute(raise_on_error=False)
        # An id equal or smaller than the last one is a letter an earlier fold recorded
        failed = [
            a
            for a in answers
            if isinstance(a, redis.ResponseError) and "equal or smaller" not in str(a)
        ]
        if failed:
            with translated(f"record the dead letters of {tenant!r}"):  # as the stores say it
                raise failed[0]

    def dead_letters(self, tenant: str, limit: int | None = None) -> list[Rejection]:
        with translated(f"read the dead letters of {tenant!r}"):
            rows = self._client.xrange(dead_letter_key(tenant), count=limit)
        return [Rejection(Position.parse(p), orjson.loads(f[b"reason"])) for p, f in rows]

    def dead_letter_count(self, tenant: str) -> int:
        with translated(f"count the dead letters of {tenant!r}"):
            return int(self._client.xlen(dead_letter_key(tenant)))

    def ping(self) -> None:
        with translated("reach Redis"):
            self._client.ping()


def _as_parsed(response: object, **options: object) -> object:
    return response


def _stored_entries(rows: list[list[Any]]) -> list[Entry]:
    """Entries from an XRANGE reply as parsed: [id, [field, value, ...]] each (ours have the
    one field "e"); the ids are Redis's own, so only split."""
    entries: list[Entry] = []
    append = entries.append
    for position, fields in rows:
        ms, _, seq = position.partition(b"-")
        raw = fields[1] if len(fields) == 2 and fields[0] == b"e" else _field(fields)
        append((Position(int(ms), int(seq)), raw))
    return entries


def _field(fields: list[bytes] | dict[bytes, bytes]) -> bytes:
    # a cluster's node clients parse replies their own way: the fields come as a dict
    named = (
        fields if isinstance(fields, dict) else dict(zip(fields[::2], fields[1::2], strict=True))
    )
    return named[b"e"] if b"e" in named else stray_entry(named)


class RedisSnapshotStore(RetainedOnly):
    def __init__(self, client: redis.Redis, ladder: Ladder = DEFAULT_LADDER) -> None:
        self._client = client
        self._rule = ladder
        self._publish = _script(client, "publish.lua")

    def latest_position(self, tenant: str) -> Position | None:
        with translated(f"read the snapshots of {tenant!r}"):
            raw = self._client.get(latest_snapshot_key(tenant))
        return Position.parse(raw) if raw else None

    def load(self, tenant: str, position: Position) -> bytes | None:
        with translated(f"read the snapshots of {tenant!r}"):
            return self._client.get(snapshot_key(tenant, str(position)))  # type: ignore[return-value]

    def size(self, tenant: str, position: Position) -> int:
        with translated(f"read the snapshots of {tenant!r}"):
            return int(self._client.strlen(snapshot_key(tenant, str(position))))

    def positions(self, tenant: str) -> list[Position]:
        with translated(f"read the snapshots of {tenant!r}"):
            raw = self._client.lrange(snapshot_ladder_key(tenant), 0, -1)
        return [Position.parse(p) for p in raw]

    def folded(self, tenant: str, position: Position) -> int:
        with translated(f"read the snapshots of {tenant!r}"):
            return int(self._client.hget(snapshot_folded_key(tenant), str(position)) or 0)

    def digest(self, tenant: str, position: Position) -> str | None:
        with translated(f"read the snapshots of {tenant!r}"):
            found = self._client.hget(snapshot_digests_key(tenant), str(position))
        return found.decode() if found else None

    def publish(
        self,
        tenant: str,
        blob: bytes,
        position: Position,
        expected: Position | None,
        base: Position | None = None,
        folded: int = 0,
    ) -> bool:
        digest = snapshot_digest(blob) if base is None else ""
        with translated(f"publish a snapshot of {tenant!r}"):
            for _ in range(PUBLISH_ATTEMPTS):
                ladder, bases, counts = self._ladder_of(tenant)
                dropped = self._rule.dropped_by_publish(
                    ladder, bases, counts, position, base, folded
                )
                keys = [
                    snapshot_key(tenant, str(position)),
                    latest_snapshot_key(tenant),
                    snapshot_ladder_key(tenant),
                    snapshot_bases_key(tenant),
                    snapshot_folded_key(tenant),
                    snapshot_digests_key(tenant),
                    *(snapshot_key(tenant, str(p)) for p in dropped),
                ]
                args = [blob, str(position), str(expected or ""), str(base or ""), folded]
                args += [digest, len(ladder), *map(str, dropped)]
                published = int(self._publish(keys=keys, args=args))  # type: ignore[call-overload]
                if published >= 0:
                    return published == 1
        raise StoreError(
            f"publish a snapshot of {tenant!r} failed: its ladder of snapshots changed"
            f" {PUBLISH_ATTEMPTS} times while it was read"
        )

    def _ladder_of(
        self, tenant: str
    ) -> tuple[list[Position], dict[Position, Position], dict[Position, int]]:
        """The kept snapshots in publish order, the bases of the deltas, the events folded."""
        with self._client.pipeline(transaction=False) as pipe:
            pipe.lrange(snapshot_ladder_key(tenant), 0, -1)
            pipe.hgetall(snapshot_bases_key(tenant))
            pipe.hgetall(snapshot_folded_key(tenant))
            ladder, bases, counts = pipe.execute()
        parse = Position.parse
        return (
            [parse(p) for p in ladder],
            {parse(p): parse(b) for p, b in bases.items()},
            {parse(p): int(n) for p, n in counts.items()},
        )

    def drop(self, tenant: str) -> None:
        with translated(f"drop the snapshots of {tenant!r}"):
            blobs = [snapshot_key(tenant, str(p)) for p in self.positions(tenant)]
            self._client.delete(
                latest_snapshot_key(tenant),
                snapshot_ladder_key(tenant),
                snapshot_bases_key(tenant),
                snapshot_folded_key(tenant),
                snapshot_digests_key(tenant),
                *blobs,
            )


def _appended(position: bytes, flag: int, previous: bytes | None = None) -> Appended:
    """One row of append.lua's answer."""
    before = Position.parse(previous) if previous is not None else None
    return Appended(Position.parse(position), bool(flag), before)
