"""Archive segments on Redis, beside the log: a blob per segment, a manifest list of their
records, and a small hash with the last archived position and how many entries there are.

A segment is written and recorded in one transaction (watching the hash, so two archive
jobs cannot both record the same entries); the log is trimmed only after that, and the
next run finishes a trim a crash cut short. Decoded segments are cached (they never change).
"""

from __future__ import annotations

from collections import OrderedDict

import redis

from assocmem.engine.position import Position

from .archive import Segment, archived_entries, archived_holds, decode_segment, encode_segment
from .errors import StoreError
from .keys import archive_manifest_key, archive_meta_key, archive_segment_key
from .stores import Entry

SEGMENTS_CACHED = 4


class RedisArchive:
    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._manifests: dict[str, list[Segment]] = {}
        self._decoded: OrderedDict[tuple[str, Position], list[Entry]] = OrderedDict()

    def upto(self, tenant: str) -> Position | None:
        raw = self._client.hget(archive_meta_key(tenant), "upto")
        return Position.parse(raw) if raw else None

    def count(self, tenant: str) -> int:
        return int(self._client.hget(archive_meta_key(tenant), "count") or 0)

    def segments(self, tenant: str) -> list[Segment]:
        known = self._manifests.get(tenant, [])
        key = archive_manifest_key(tenant)
        if self._client.llen(key) != len(known):
            known = [Segment.of(r) for r in self._client.lrange(key, 0, -1)]
            self._manifests[tenant] = known
        return known

    def read(self, tenant: str, after: Position, upto: Position | None, count: int) -> list[Entry]:
        return archived_entries(
            self.segments(tenant), lambda s: self._load(tenant, s), after, upto, count
        )

    def holds(self, tenant: str, position: Position) -> bool:
        return archived_holds(self.segments(tenant), lambda s: self._load(tenant, s), position)

    def add(self, tenant: str, entries: list[Entry], upto: Position | None) -> Segment:
        """Record `entries` (the ones after `upto`, the last archived) as one segment."""
        segment, blob = encode_segment(entries)
        meta = archive_meta_key(tenant)
        with self._client.pipeline() as pipe:
            try:
                pipe.watch(meta)
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
