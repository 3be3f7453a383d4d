"""Redis errors as the stores' own: StoreUnavailable when Redis cannot be reached,
StoreError for the rest. Apart from the stores, so that `up` can check its operator key
without importing them (they bring the engine: a quarter of a second of its start)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from .errors import StoreError, StoreUnavailable

log = logging.getLogger(__name__)

UNREACHABLE_RETRY = 5.0
"""Seconds between two tries of a process that waits for its Redis."""


@contextmanager
def translated(action: str) -> Iterator[None]:
    try:
        yield
    except redis.ConnectionError as exc:
        raise StoreUnavailable(f"cannot {action}: {exc}") from exc
    except redis.RedisError as exc:
        raise StoreError(f"{action} failed: {exc}") from exc


class Outage:
    """What a loop that retries says of its Redis: once that it cannot reach it, once that it
    answers again, rather than a traceback at every try (five a second, for as long as a
    Redis restart lasts). Other failures are logged with their traceback each time."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.down = False

    def failed(self, exc: Exception, retry: float) -> None:
        if not isinstance(exc, redis.ConnectionError | redis.TimeoutError | StoreUnavailable):
            log.error("%s failed; trying again in %.1f s", self.who, retry, exc_info=exc)
        elif not self.down:
            log.warning("%s: cannot reach Redis (%s); trying until it answers", self.who, exc)
            self.down = True

    def passed(self) -> None:
        if self.down:
            log.warning("%s: Redis answers again", self.who)
            self.down = False


def wait_until_reachable(client: redis.Redis, who: str, stop: threading.Event) -> bool:
    """Until `client`'s Redis answers (True) or `stop` is set (False), one line logged per
    try: a worker or cron started beside its Redis (by hand, by a supervisor) waits for it
    rather than dying with a traceback. A refused password is no reason to wait."""
    while not stop.is_set():
        try:
            client.ping()
            return True
        except redis.AuthenticationError as exc:
            raise StoreError(f"{who}: Redis refused the credentials of REDIS_URL: {exc}") from exc
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning(
                "%s: cannot reach Redis (%s); trying again in %.0f s", who, exc, UNREACHABLE_RETRY
            )
        except redis.RedisError as exc:  # something else answers there (an HTTP server, say)
            raise StoreError(f"{who}: REDIS_URL does not lead to a Redis: {exc}") from exc
        stop.wait(UNREACHABLE_RETRY)
    return False
