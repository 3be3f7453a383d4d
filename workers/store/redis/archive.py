"""Archive segments on Redis, beside the log: a blob per segment, a manifest list of their
records, and a small hash with the last archived position and how many entries there are.

A segment is written and recorded in one transaction (watching the hash, so two archive
jobs cannot both record the same entries); the log is trimmed only after that, and the
next run finishes a trim a crash cut short. Decoded segments are cached: they change only
when an erasure rewrites them, which raises the tenant's epoch, and the caches follow it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import redis

from assocmem.engine.position import Position
from assocmem.workers.errors import StoreError
from assocmem.workers.store.archive import (
    Segment,
    archived_at,
    archived_entries,
    archived_holds,
    decode_segment,
    encode_segment,
)
from assocmem.workers.store.ports import Entry
from assocmem.workers.store.redis.keys import (
    archive_manifest_key,
    archive_meta_key,
    archive_segment_key,
    epoch_key,
    rewriting_key,
)

SEGMENTS_CACHED = 4


class RedisArchive:
    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._manifests: dict[str, tuple[bytes | None, list[Segment]]] = {}
        self._decoded: OrderedDict[tuple[str, Position], list[Entry]] = OrderedDict()

    def upto(self, tenant: str) -> Position | None:
        raw = self._client.hget(archive_meta_key(tenant), "upto")
        return Position.parse(raw) if raw else None

    def count(self, tenant: str) -> int:
        return int(self._client.hget(archive_meta_key(tenant), "count") or 0)

    def segments(self, tenant: str) -> list[Segment]:
        epoch, known = self._manifests.get(tenant, (None, []))
        key = archive_manifest_key(tenant)
        with self._client.pipeline(transaction=False) as pipe:
            now, length = pipe.get(epoch_key(tenant)).llen(key).execute()
        if now != epoch:
            self.forget(tenant)
        if now != epoch or length != len(known):
            known = [Segment.of(r) for r in self._client.lrange(key, 0, -1)]
            self._manifests[tenant] = (now, known)
        return known

    def forget(self, tenant: str) -> None:
        """Drop what this process cached of the tenant's archive."""
        self._manifests.pop(tenant, None)
        for key in [k for k in self._decoded if k[0] == tenant]:
            del self._decoded[key]

    def rewrite(self, tenant: str, keep: Callable[[Entry], bool]) -> list[Position]:
        """Re-encode every segment holding an entry `keep` refuses, without it (a segment
        left empty leaves the manifest); the positions taken out."""
        meta, manifest = archive_meta_key(tenant), archive_manifest_key(tenant)
        self.forget(tenant)
        records, blobs, stale, removed = [], {}, [], []
        for segment in [Segment.of(r) for r in self._client.lrange(manifest, 0, -1)]:
            entries = self._load(tenant, segment)
            kept = [entry for entry in entries if keep(entry)]
            if len(kept) == len(entries):
                records.append(segment.record())
                continue
            still = {position for position, _ in kept}
            removed += [position for position, _ in entries if position not in still]
            stale.append(archive_segment_key(tenant, str(segment.first)))
            if kept:
                again, blob = encode_segment(kept)
                blobs[archive_segment_key(tenant, str(again.first))] = blob
                records.append(again.record())
        if removed:
            with self._client.pipeline(transaction=True) as pipe:
                pipe.delete(*stale)
                for key, blob in blobs.items():
                    pipe.set(key, blob)
                pipe.delete(manifest)
                if records:
                    pipe.rpush(manifest, *records)
                pipe.hincrby(meta, "count", -len(removed))
                pipe.execute()
        self.forget(tenant)
        return removed

    def read(self, tenant: str, after: Position, upto: Position | None, count: int) -> list[Entry]:
        return archived_entries(
            self.segments(tenant), lambda s: self._load(tenant, s), after, upto, count
        )

    def at(self, tenant: str, positions: list[Position]) -> list[Entry]:
        return archived_at(self.segments(tenant), lambda s: self._load(tenant, s), positions)

    def holds(self, tenant: str, position: Position) -> bool:
        return archived_holds(self.segments(tenant), lambda s: self._load(tenant, s), position)

    def add(self, tenant: str, entries: list[Entry], upto: Position | None) -> Segment:
        """Record `entries` (the ones after `upto`, the last archived) as one segment."""
        segment, blob = encode_segment(entries)
        meta = archive_meta_key(tenant)
        with self._client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(meta, rewriting_key(tenant))
                if pipe.exists(rewriting_key(tenant)):
                    raise StoreError(f"an erasure rewrites the history of {tenant!r}: try later")
                now = pipe.hget(meta, "upto")
                if (Position.parse(now) if now else None) != upto:
                    raise StoreError(f"another archive job of {tenant!r} ran meanwhile")
                pipe.multi()
                pipe.set(archive_segment_key(tenant, str(segment.first)), blob, nx=True)
                pipe.rpush(archive_manifest_key(tenant), segment.record())
                pipe.hset(meta, "upto", str(segment.last))
                pipe.hincrby(meta, "count", segment.count)
                pipe.execute()
            except redis.WatchError as exc:
                raise StoreError(f"another archive job of {tenant!r} ran meanwhile") from exc
        return segment

    def _load(self, tenant: str, segment: Segment) -> list[Entry]:
        key = (tenant, segment.first)
        found = self._decoded.get(key)
        if found is None:
            blob = self._client.get(archive_segment_key(tenant, str(segment.first)))
            found = self._decoded[key] = decode_segment(segment, blob)
            if len(self._decoded) > SEGMENTS_CACHED:
                self._decoded.popitem(last=False)
        else:
            self._decoded.move_to_end(key)
        return found
