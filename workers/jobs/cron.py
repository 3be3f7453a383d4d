"""The nightly cron: at the configured local time, queue one sleep consolidation, one
archive run and one expiry pass per tenant.

Exactly one cron schedules at a time, however many run: each holds a lease in Redis
(SET NX with an expiry, renewed while it lives) and only the holder fires; a standby
takes over within LEASE_SECONDS of the holder dying. A night's job id is the tenant and
the local date, so a night fired twice (a lease handed over mid-fire) runs once. A
night missed while no cron ran is fired when one comes back, if it is the latest.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
import zoneinfo
from datetime import datetime

import redis
from croniter import croniter

from assocmem.workers.errors import StoreError
from assocmem.workers.jobs.archive_job import enqueue_archive
from assocmem.workers.jobs.consolidation_job import enqueue_consolidation
from assocmem.workers.jobs.expiry_job import enqueue_expiry
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.store.redis.errors import Outage, wait_until_writable
from assocmem.workers.store.redis.keys import cron_last_key, cron_lease_key

log = logging.getLogger(__name__)

LEASE_SECONDS = 30
"""How long a lease lasts unrenewed: a standby takes over at most this long after the holder dies."""
TICK_SECONDS = 5.0
"""How often the cron renews its lease and looks at the time."""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


class Lease:
    def __init__(self, connection: redis.Redis, key: str, seconds: int = LEASE_SECONDS) -> None:
        self.connection = connection
        self.key = key
        self.owner = f"{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.ms = seconds * 1000
        self._renew = connection.register_script(_RENEW)

    def hold(self) -> bool:
        """Take the lease if free, renew it if ours; whether we hold it now."""
        if self._renew(keys=[self.key], args=[self.owner, self.ms]):
            return True
        return bool(self.connection.set(self.key, self.owner, nx=True, px=self.ms))

    def release(self) -> None:
        if self.connection.get(self.key) == self.owner.encode():
            self.connection.delete(self.key)


def fire(runtime: Runtime, night: datetime) -> list[str]:
    """Queue the consolidation, then the archive run, then the expiry pass, of every tenant
    for `night` (a local time); the job ids. A worker takes them in that order."""
    stamp = night.strftime("%Y%m%dT%H%M")
    ids = []
    for tenant in runtime.log.tenants():
        ids.append(enqueue_consolidation(runtime, tenant, f"consolidate-{tenant}-{stamp}"))
        ids.append(enqueue_archive(runtime, tenant, f"archive-{tenant}-{stamp}"))
        ids.append(enqueue_expiry(runtime, tenant, f"expire-{tenant}-{stamp}"))
    return ids


class Cron:
    """One cron between its ticks: the lease it holds or waits for, and the schedule."""

    def __init__(self, runtime: Runtime, lease: Lease | None = None) -> None:
        assert runtime.queue_connection is not None, "the cron needs Redis"
        self.runtime = runtime
        self.zone = zoneinfo.ZoneInfo(runtime.settings.timezone)
        self.schedule = runtime.settings.consolidation.cron()
        self.lease = lease or Lease(runtime.queue_connection, cron_lease_key())
        self.holding = False

    def tick(self, now: datetime) -> list[str]:
        """Renew or take the lease and, holding it, queue the nights due at `now` (a time
        in the cron's zone); the ids of the jobs queued."""
        if self.schedule is None:
            return []
        if not self.lease.hold():
            if self.holding:
                log.warning("cron: lease lost; standing by")
            self.holding = False
            return []
        if not self.holding:
            log.info("cron: holding the lease; consolidation at %r (%s)", self.schedule, self.zone)
        self.holding = True
        return _fire_due(self.runtime, self.schedule, now)


def run_cron(runtime: Runtime, stop: threading.Event, tick: float = TICK_SECONDS) -> None:
    """Hold the lease and fire every scheduled night until `stop`."""
    cron = Cron(runtime)
    if cron.schedule is None:
        log.info("cron: nightly consolidation is off (ASSOCMEM_CONSOLIDATE_AT=off)")
        while not stop.wait(tick):  # a tick at a time: a signal handler runs in between
            pass
        return
    assert runtime.queue_connection is not None
    if not wait_until_writable(runtime.queue_connection, "cron", stop):
        return
    outage = Outage("cron")
    try:
        while not stop.is_set():
            try:
                cron.tick(datetime.now(cron.zone))
                outage.passed()
            except (redis.RedisError, StoreError) as exc:
                outage.failed(exc, tick)
            stop.wait(tick)
    finally:
        try:
            cron.lease.release()
        except redis.RedisError:
            pass


def _fire_due(runtime: Runtime, schedule: str, now: datetime) -> list[str]:
    connection = runtime.queue_connection
    assert connection is not None
    latest = croniter(schedule, now).get_prev(datetime)
    raw = connection.get(cron_last_key())
    fired = float(raw) if raw is not None else None
    if fired is None:  # first start: from now on, no catching up on nights before it
        connection.set(cron_last_key(), now.timestamp())
        return []
    if latest.timestamp() <= fired:
        return []
    ids = fire(runtime, latest)
    connection.set(cron_last_key(), latest.timestamp())
    log.info("cron: night %s queued %d jobs: %s", latest.isoformat(), len(ids), ids)
    return ids
