"""The event log: one Redis stream per tenant; append (idempotent, atomic per batch) and range reads."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from importlib import resources

import redis

from assocmem.engine.event import Event, encode_event

from .errors import StoreError, StoreUnavailable
from .keys import fold_wanted_key, idempotency_key, log_key, tenants_key

DEFAULT_BATCH = 1000
"""Entries read from the stream per round trip."""

Entry = tuple[str, bytes]
"""(position, encoded envelope) as stored in the stream."""


@dataclasses.dataclass(frozen=True, slots=True)
class Appended:
    position: str
    is_duplicate: bool


class EventLog:
    def __init__(self, client: redis.Redis, idempotency_ttl: int = 7 * 24 * 3600) -> None:
        self._client = client
        self._ttl = idempotency_ttl
        self._append = client.register_script(
            resources.files(__package__).joinpath("append.lua").read_text()
        )

    def append(self, tenant: str, events: list[Event]) -> list[Appended]:
        """Append `events` atomically; an event whose key was seen before returns the first position."""
        if not events:
            return []
        keys = [log_key(tenant), fold_wanted_key(tenant)]
        args: list[str | bytes | int] = [len(events), self._ttl]
        for event in events:
            slot = 0
            if event.key:
                keys.append(idempotency_key(tenant, event.key))
                slot = len(keys) - 2
            args += [encode_event(event), slot]
        try:
            rows = self._append(keys=keys, args=args)
            self._client.sadd(tenants_key(), tenant)
        except redis.ConnectionError as exc:
            raise StoreUnavailable(f"cannot append to the log of {tenant!r}: {exc}") from exc
        except redis.RedisError as exc:
            raise StoreError(f"append to the log of {tenant!r} failed: {exc}") from exc
        return [Appended(_text(position), bool(flag)) for position, flag in rows]

    def entries(
        self, tenant: str, after: str, upto: str = "+", count: int = DEFAULT_BATCH
    ) -> list[Entry]:
        """Up to `count` entries strictly after `after`, up to and including `upto`."""
        try:
            rows = self._client.xrange(log_key(tenant), min=f"({after}", max=upto, count=count)
        except redis.ConnectionError as exc:
            raise StoreUnavailable(f"cannot read the log of {tenant!r}: {exc}") from exc
        return [(_text(position), fields.get(b"e", b"")) for position, fields in rows]

    def iter_entries(
        self, tenant: str, after: str, upto: str = "+", batch: int = DEFAULT_BATCH
    ) -> Iterator[list[Entry]]:
        """Every entry after `after`, in batches, following the stream as it is read."""
        while True:
            chunk = self.entries(tenant, after, upto, batch)
            if not chunk:
                return
            yield chunk
            after = chunk[-1][0]
            if len(chunk) < batch:
                return

    def wait_for_entries(self, tenant: str, after: str, timeout: float) -> bool:
        """Block until the log has an entry after `after` or `timeout` seconds pass; True if it has."""
        try:
            rows = self._client.xread({log_key(tenant): after}, count=1, block=int(timeout * 1000))
        except redis.ConnectionError as exc:
            raise StoreUnavailable(f"cannot read the log of {tenant!r}: {exc}") from exc
        return bool(rows)

    def last_position(self, tenant: str) -> str | None:
        rows = self._client.xrevrange(log_key(tenant), count=1)
        return _text(rows[0][0]) if rows else None

    def length(self, tenant: str) -> int:
        return int(self._client.xlen(log_key(tenant)))

    def tenants(self) -> list[str]:
        return sorted(_text(t) for t in self._client.smembers(tenants_key()))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
