"""Redis errors as the stores' own: StoreUnavailable when Redis cannot be reached or refuses
writes for now, StoreError for the rest; and how processes that retry wait for Redis and
say so. Apart from the stores, so that `up` can check its operator key without importing
them (they bring the engine, a good part of its start)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from assocmem.workers.errors import DiskLow, StoreError, StoreUnavailable

log = logging.getLogger(__name__)

UNREACHABLE_RETRY = 5.0
"""Seconds between two tries of a process that waits for its Redis."""
WRITE_PROBE = "am:write-probe"
"""Written (for a second) by a process that waits for its Redis to take writes."""
REFUSING_WRITES = ("MISCONF", "NOREPLICAS", "OOM", "READONLY")
"""Error codes of a Redis that is up but refuses writes for now: it cannot persist (a full
disk), lacks the replicas it must write to, is out of memory, or is a read-only replica.
(An error raised in a Lua script keeps its code in its message.)"""
_REFUSAL = re.compile(rf"(?:^|caused error: )(?:{'|'.join(REFUSING_WRITES)})\b")
"""A refusal's code, at the start of the message, or after what a pipeline puts before it."""


def refuses_writes(exc: BaseException) -> bool:
    return isinstance(exc, redis.OutOfMemoryError | redis.ReadOnlyError) or (
        isinstance(exc, redis.ResponseError) and _REFUSAL.search(str(exc)) is not None
    )


def is_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says Redis is out of reach or refuses writes: a state that passes."""
    unreachable = redis.ConnectionError | redis.TimeoutError | StoreUnavailable
    return isinstance(exc, unreachable) or refuses_writes(exc)


@contextmanager
def translated(action: str) -> Iterator[None]:
    try:
        yield
    except redis.ConnectionError as exc:
        raise StoreUnavailable(f"cannot {action}: {exc}") from exc
    except redis.RedisError as exc:
        if refuses_writes(exc):  # a state of the server that passes: a 503, to retry
            raise StoreUnavailable(f"cannot {action}: Redis refuses writes: {exc}") from exc
        raise StoreError(f"{action} failed: {exc}") from exc


class Outage:
    """What a loop that retries says of its Redis: once that it is unavailable (out of reach,
    or refusing writes), once that it answers again, rather than a traceback at every try
    (five a second, for as long as a Redis restart lasts). Other failures are logged with
    their traceback each time."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.down = False

    def failed(self, exc: Exception, retry: float | None = None) -> None:
        """`retry`: seconds until the next try, if the caller waits."""
        if not is_unavailable(exc):
            then = f"; trying again in {retry:.1f} s" if retry is not None else ""
            log.error("%s failed%s", self.who, then, exc_info=exc)
        elif not self.down:
            if isinstance(exc, DiskLow):
                log.warning("%s: %s", self.who, exc)
            else:
                log.warning("%s: Redis is unavailable (%s); trying until it answers", self.who, exc)
            self.down = True

    def passed(self) -> None:
        if self.down:
            log.warning("%s: Redis answers again", self.who)
            self.down = False


def wait_until_writable(client: redis.Redis, who: str, stop: threading.Event) -> bool:
    """Until `client`'s Redis takes a write (True) or `stop` is set (False), one line logged
    per try: a worker or cron started beside its Redis (by hand, by a supervisor), or while
    it refuses writes (RQ's worker quits at the first write refused, and was restarted into
    the same refusal twice a second), waits for it rather than dying with a traceback. A
    refused password is no reason to wait."""
    while not stop.is_set():
        try:
            client.set(WRITE_PROBE, who, px=1000)
            return True
        except redis.AuthenticationError as exc:
            raise StoreError(f"{who}: Redis refused the credentials of REDIS_URL: {exc}") from exc
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning(
                "%s: cannot reach Redis (%s); trying again in %.0f s", who, exc, UNREACHABLE_RETRY
            )
        except redis.RedisError as exc:
            if not refuses_writes(exc):
                raise StoreError(f"{who}: {_no_redis(exc)}: {exc}") from exc
            log.warning(
                "%s: Redis refuses writes (%s); trying again in %.0f s", who, exc, UNREACHABLE_RETRY
            )
        stop.wait(UNREACHABLE_RETRY)
    return False


def _no_redis(exc: redis.RedisError) -> str:
    if isinstance(exc, redis.ResponseError):
        return "Redis refused a write"
    return "REDIS_URL does not lead to a Redis"  # something else answers there (HTTP, say)
