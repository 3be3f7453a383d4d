"""Immutable snapshot blobs named by position, a `latest` pointer moved by compare-and-set, and a ladder of older ones."""

from __future__ import annotations

from importlib import resources

import redis

from assocmem.engine.position import parse_position

from .keys import latest_snapshot_key, snapshot_key, snapshot_ladder_key


class SnapshotStore:
    def __init__(self, client: redis.Redis, kept: int = 16) -> None:
        self._client = client
        self._kept = kept
        self._publish = client.register_script(
            resources.files(__package__).joinpath("publish.lua").read_text()
        )

    def latest_position(self, tenant: str) -> str | None:
        raw = self._client.get(latest_snapshot_key(tenant))
        return raw.decode() if raw else None

    def load(self, tenant: str, position: str) -> bytes | None:
        return self._client.get(snapshot_key(tenant, position))

    def latest(self, tenant: str) -> tuple[str, bytes] | None:
        position = self.latest_position(tenant)
        blob = self.load(tenant, position) if position else None
        return (position, blob) if position and blob else None

    def at_or_before(self, tenant: str, position: str) -> tuple[str, bytes] | None:
        """The newest kept snapshot folded up to `position` or earlier."""
        target = parse_position(position)
        ladder = [p.decode() for p in self._client.lrange(snapshot_ladder_key(tenant), 0, -1)]
        for candidate in sorted(ladder, key=parse_position, reverse=True):
            if parse_position(candidate) <= target:
                blob = self.load(tenant, candidate)
                if blob:
                    return candidate, blob
        return None

    def positions(self, tenant: str) -> list[str]:
        return [p.decode() for p in self._client.lrange(snapshot_ladder_key(tenant), 0, -1)]

    def publish(self, tenant: str, blob: bytes, position: str, expected: str | None) -> bool:
        """Publish `blob` as the state at `position` if `latest` is still `expected`."""
        keys = [
            snapshot_key(tenant, position),
            latest_snapshot_key(tenant),
            snapshot_ladder_key(tenant),
        ]
        prefix = snapshot_key(tenant, "")
        return bool(
            self._publish(keys=keys, args=[blob, position, expected or "", self._kept, prefix])
        )
