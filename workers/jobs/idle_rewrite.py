"""Rewriting the embedded Redis's AOF while the pipeline is quiet, so that the next start
loads what the data is, not every command that made it.

Redis rewrites its AOF by itself once the commands appended since the last rewrite weigh as
much as the rewritten base (`auto-aof-rewrite-percentage 100`). Each published snapshot is
one of those commands, hundreds of MB for a large tenant, later dropped by the ladder: a
pipeline stopped before Redis's own rewrite came loaded a base and as much again of
commands on its next start, far slower than the data rewritten. Rewriting
during a burst of writes would take a core from the API and the worker, and the fork's
copied pages would grow with every write, so this waits until the AOF has stopped growing.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

import redis

from assocmem.workers.runtime.redis_server import aof_rewriting

log = logging.getLogger(__name__)

QUIET_GROWTH = 1 << 20
"""Bytes the AOF may grow by within the quiet time and still count as quiet: the workers'
heartbeats and the cron's lease write a little all the time."""


@dataclasses.dataclass(slots=True)
class IdleRewrite:
    """Ask Redis for BGREWRITEAOF once its AOF has grown by `least` bytes (and by `share` of
    its rewritten base) since the last rewrite and then no more than QUIET_GROWTH in `quiet`
    seconds. `check` is called often (each of `up`'s supervising ticks); it asks Redis at
    most every `every` seconds."""

    client: redis.Redis
    quiet: float
    least: int = 64 << 20
    share: float = 0.25
    every: float = 5.0
    clock: Callable[[], float] = time.monotonic
    _asked: float = float("-inf")
    _still: tuple[float, int] | None = None
    """Since when, and from what size, the AOF has grown by no more than QUIET_GROWTH."""

    def check(self) -> bool:
        """Whether a rewrite was started now."""
        now = self.clock()
        if now - self._asked < self.every:
            return False
        self._asked = now
        persistence = self.client.info("persistence")
        if not int(persistence.get("aof_enabled", 0)) or int(persistence.get("loading", 0)):
            return False
        if aof_rewriting(persistence):
            self._still = None
            return False
        size, base = int(persistence["aof_current_size"]), int(persistence["aof_base_size"])
        if self._still is None or size - self._still[1] > QUIET_GROWTH:
            self._still = (now, size)
        grown = size - base
        if now - self._still[0] < self.quiet or grown < max(self.least, self.share * base):
            return False
        try:
            self.client.bgrewriteaof()
        except redis.ResponseError as exc:  # one started meanwhile: nothing to do
            log.info("AOF rewrite not started: %s", exc)
            return False
        log.info("AOF rewrite started: %d bytes appended to a %d-byte base", grown, base)
        self._still = None
        return True
