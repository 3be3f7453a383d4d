"""Rewriting a tenant's history in Redis for an erasure: the log copied without the refused
entries (same ids) and swapped in atomically with what was appended meanwhile, the archive's
segments re-encoded, the dead letters and idempotency keys of the refused entries dropped,
and the AOF rewritten so no file keeps them."""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib import resources

import redis

from assocmem.engine.position import Position
from assocmem.workers.runtime.redis_server import aof_rewriting
from assocmem.workers.store.ports import Entry
from assocmem.workers.store.redis.archive import RedisArchive
from assocmem.workers.store.redis.connect import keys_matching, node_clients, replicas_caught_up
from assocmem.workers.store.redis.keys import (
    dead_letter_key,
    epoch_key,
    idempotency_pattern,
    log_key,
    rewrite_key,
    rewriting_key,
    seen_keys_pattern,
    tenant_pattern,
    tenants_key,
)

COPY_BATCH = 1000
REWRITE_HOLD = 3600
"""Seconds archive runs are held off by a rewrite (a crash mid-rewrite frees them then)."""
AOF_WAIT = 600.0
"""Seconds an AOF rewrite may take before the erasure reports it unfinished."""


class RedisRewriter:
    def __init__(self, client: redis.Redis, archive: RedisArchive) -> None:
        self._client = client
        self._archive = archive
        script = resources.files(__package__).joinpath("swap_log.lua").read_text()
        self._swap = client.register_script(script)

    def rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        # Archive runs wait (their transaction watches the key) until the swap is done.
        self._client.set(rewriting_key(tenant), 1, ex=REWRITE_HOLD)
        try:
            return self._rewrite(tenant, keep)
        finally:
            self._client.delete(rewriting_key(tenant))

    def _rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        removed = self._archive.rewrite(tenant, keep)
        copy = rewrite_key(tenant)
        self._client.delete(copy)  # a rewrite a crash cut short
        archived = self._archive.upto(tenant)
        # Entries at or before the archive's end are in a segment (their trim may be due):
        # the copy leaves them out, which is that trim.
        last = str(archived) if archived is not None else "0-0"
        newest = self._client.xrevrange(log_key(tenant), count=1)
        head = newest[0][0].decode() if newest else last
        # Up to the head the rewrite found, entries are judged; what came after is kept,
        # copied as it is by the swap.
        while last != head:
            rows = self._client.xrange(log_key(tenant), min=f"({last}", max=head, count=COPY_BATCH)
            if not rows:
                break
            with self._client.pipeline(transaction=False) as pipe:
                for raw_id, fields in rows:
                    entry = (Position.parse(raw_id), fields[b"e"])
                    if keep(entry):
                        pipe.xadd(copy, fields, id=raw_id)
                    else:
                        removed.append(entry[0])
                pipe.execute()
            last = rows[-1][0].decode()
        self._swap(keys=[log_key(tenant), copy, epoch_key(tenant)], args=[last])
        return removed

    def forget_positions(self, tenant: str, positions: list[Position]) -> None:
        gone = {str(p) for p in positions}
        for start in range(0, len(positions), COPY_BATCH):
            ids = [str(p) for p in positions[start : start + COPY_BATCH]]
            self._client.xdel(dead_letter_key(tenant), *ids)
        for buckets in _scanned(self._client, seen_keys_pattern(tenant)):
            with self._client.pipeline(transaction=False) as pipe:
                for bucket in buckets:
                    pipe.hgetall(bucket)
                held = pipe.execute()
                for bucket, seen in zip(buckets, held, strict=True):
                    stale = [f for f, v in seen.items() if v.split(b" ", 1)[0].decode() in gone]
                    if stale:
                        pipe.hdel(bucket, *stale)
                pipe.execute()
        for keys in _scanned(self._client, idempotency_pattern(tenant)):  # kept before buckets
            values = self._client.mget(keys)
            stale = [
                k
                for k, v in zip(keys, values, strict=True)
                if v is not None and v.split(b" ", 1)[0].decode() in gone
            ]
            if stale:
                self._client.delete(*stale)

    def erase_tenant(self, tenant: str) -> int:
        entries = int(self._client.xlen(log_key(tenant))) + self._archive.count(tenant)
        keep = epoch_key(tenant).encode()
        for keys in _scanned(self._client, tenant_pattern(tenant)):
            doomed = [k for k in keys if k != keep]
            if doomed:
                self._client.delete(*doomed)
        self._client.srem(tenants_key(), tenant)
        self._client.incr(epoch_key(tenant))
        self._archive.forget(tenant)
        return entries

    def compact(self) -> None:
        """Have the AOF rewritten from the data as it is now, and wait for it, on every node
        (a cluster's replicas keep an AOF of their own too). A rewrite already running
        (Redis's own, or `up`'s once writes stop) forked before the deletes this follows:
        its files would keep what they deleted, so it is waited for and asked again."""
        clients = node_clients(self._client)
        if len(clients) > 1 and not replicas_caught_up(self._client):
            raise TimeoutError("the replicas did not catch up with the erasure's deletes")
        for client in clients:
            _compact(client)


def _compact(client: redis.Redis) -> None:
    if not int(client.info("persistence").get("aof_enabled", 0)):
        return
    deadline = time.monotonic() + AOF_WAIT
    while True:
        try:
            client.bgrewriteaof()  # or scheduled after another child: forks later
            break
        except redis.ResponseError as exc:
            if "already in progress" not in str(exc):
                raise
        _wait_for_rewrite(client, deadline)
    _wait_for_rewrite(client, deadline)


def _wait_for_rewrite(client: redis.Redis, deadline: float) -> None:
    while True:
        if not aof_rewriting(client.info("persistence")):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the AOF rewrite took over {AOF_WAIT:.0f} s")
        time.sleep(0.1)


def _scanned(client: redis.Redis, pattern: str) -> list[list[bytes]]:
    """The keys matching `pattern`, in batches (SCAN: Redis is never blocked for long)."""
    return keys_matching(client, pattern, COPY_BATCH)
