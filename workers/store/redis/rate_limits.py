"""Request and event rates per API key, counted in Redis so every replica shares them: a
sliding window of one second (`limits`' sliding-window counter, the approximation of a
moving window that costs two counters, not one entry per hit)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import redis
from limits import RateLimitItem, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import Storage
from limits.strategies import SlidingWindowCounterRateLimiter

from assocmem.engine.principal import Principal
from assocmem.workers.errors import RateLimited
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.store.redis.errors import Outage


class RateLimits:
    def __init__(self, settings: Settings, storage: Storage) -> None:
        self._limiter = SlidingWindowCounterRateLimiter(storage)
        self._requests = _per_second(settings.key_requests)
        self._events = _per_second(settings.key_events)
        self._failures = (
            RateLimitItemPerMinute(settings.key_failures) if settings.key_failures else None
        )
        self._outage = Outage("rate limits (requests pass uncounted meanwhile)")

    def take_request(self, principal: Principal) -> None:
        """Count one request of the principal's key; RateLimited if it is over its rate."""
        self._take(self._requests, principal, 1, "requests", "ASSOCMEM_KEY_REQUESTS")

    def refuse_failing_peer(self, peer: str) -> None:
        """RateLimited if `peer` sent too many unknown keys in the last minute: checked before
        its key is, so a guess among them learns nothing."""
        if self._failures is None or self._counted(
            lambda: self._limiter.test(self._failures, peer, "failed-keys")
        ):  # type: ignore[arg-type]
            return
        reset = self._limiter.get_window_stats(self._failures, peer, "failed-keys").reset_time
        retry = max(1, math.ceil(reset - time.time()))
        raise RateLimited(
            f"{peer} sent more than {self._failures.amount} unknown API keys in a minute"
            f" (ASSOCMEM_KEY_FAILURES); retry in {retry} s",
            retry,
        )

    def count_failed_key(self, peer: str) -> None:
        """One more request from `peer` with an unknown or revoked key."""
        if self._failures is not None:
            self._counted(lambda: self._limiter.hit(self._failures, peer, "failed-keys"))  # type: ignore[arg-type]

    def _counted(self, count: Callable[[], bool]) -> bool:
        """`count`'s answer, or True (let it pass) while Redis cannot count."""
        try:
            answer = count()
        except redis.RedisError as exc:
            self._outage.failed(exc)
            return True
        self._outage.passed()
        return answer

    def take_events(self, principal: Principal, count: int) -> None:
        """Count `count` events appended with the principal's key; RateLimited (and none of
        them counted) if they would take it over its rate."""
        self._take(self._events, principal, count, "events", "ASSOCMEM_KEY_EVENTS")

    def _take(
        self, item: RateLimitItem | None, principal: Principal, cost: int, what: str, setting: str
    ) -> None:
        if item is None or principal.key is None:  # in-process callers (jobs) are not limited
            return
        try:
            hit = self._limiter.hit(item, principal.key, what, cost=cost)
        except redis.RedisError as exc:
            # Open, not shut: a Redis that cannot count (its disk full, say) must not stop
            # the reads the API answers from memory; appends fail on their own
            self._outage.failed(exc)
            return
        self._outage.passed()
        if hit:
            return
        reset = self._limiter.get_window_stats(item, principal.key, what).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        raise RateLimited(
            f"the key of agent {principal.agent!r} is over its rate of {item.amount} {what} per"
            f" second ({setting}); retry in {retry} s",
            retry,
        )


def _per_second(amount: int) -> RateLimitItem | None:
    return RateLimitItemPerSecond(amount) if amount else None
