"""Request and event rates per API key, counted in Redis so every replica shares them: a
sliding window of one second (`limits`' sliding-window counter, the approximation of a
moving window that costs two counters, not one entry per hit)."""

from __future__ import annotations

import math
import time

import redis
from limits import RateLimitItem, RateLimitItemPerSecond
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
        self._outage = Outage("rate limits (requests pass uncounted meanwhile)")

    def take_request(self, principal: Principal) -> None:
        """Count one request of the principal's key; RateLimited if it is over its rate."""
        self._take(self._requests, principal, 1, "requests", "ASSOCMEM_KEY_REQUESTS")

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
