"""Redis errors as the stores' own: StoreUnavailable when Redis cannot be reached,
StoreError for the rest. Apart from the stores, so that `up` can check its operator key
without importing them (they bring the engine: a quarter of a second of its start)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis

from .errors import StoreError, StoreUnavailable


@contextmanager
def translated(action: str) -> Iterator[None]:
    try:
        yield
    except redis.ConnectionError as exc:
        raise StoreUnavailable(f"cannot {action}: {exc}") from exc
    except redis.RedisError as exc:
        raise StoreError(f"{action} failed: {exc}") from exc
