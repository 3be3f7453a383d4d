"""The stores, the job queue and the clock, built once from settings and shared by the
application, the jobs and the scheduler."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import redis
from limits.storage import MemoryStorage, RedisClusterStorage, RedisStorage, Storage
from rq import Queue
from rq.serializers import JSONSerializer

from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.snapshot_cache import cached_store
from assocmem.workers.store.disk_guard import with_disk_guard
from assocmem.workers.store.disk_space import DiskSpace
from assocmem.workers.store.memory import InMemoryEventLog, InMemorySnapshotStore
from assocmem.workers.store.ports import EventLog, SnapshotStore
from assocmem.workers.store.redis.api_keys import InMemoryKeyStore, KeyStore, RedisKeyStore
from assocmem.workers.store.redis.connect import DataClient, data_client, is_cluster_url
from assocmem.workers.store.redis.keys import FOLD_QUEUE, QUEUES, RATES_PREFIX
from assocmem.workers.store.redis.stores import RedisEventLog, RedisSnapshotStore
from assocmem.workers.store.snapshot_rungs import with_rungs


@dataclasses.dataclass
class Runtime:
    settings: Settings
    log: EventLog
    snapshots: SnapshotStore
    queue_connection: redis.Redis | None = None
    """RQ's Redis; None for an in-memory runtime, which runs jobs by direct call."""
    clock: Callable[[], float] = time.time
    """Wall-clock seconds: since when an unpublished event has waited, and when a snapshot
    of few events falls due (recorded in Redis for every worker's scheduler to read, so the
    clock of any machine); tests pass their own."""
    closers: list[Callable[[], None]] = dataclasses.field(default_factory=list)
    folded: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Per tenant, the state the fold job last folded in this process (jobs run unforked)."""
    keys: KeyStore = dataclasses.field(default_factory=InMemoryKeyStore)
    """The API keys (only their digests)."""
    rates: Storage = dataclasses.field(default_factory=MemoryStorage)
    """Where the per-key rate counters live (workers/store/redis/rate_limits.py)."""
    disk: DiskSpace = dataclasses.field(default_factory=lambda: DiskSpace((), 0))
    """Room on the disks written to: appends and snapshots wait while it is short."""

    @classmethod
    def connect(cls, settings: Settings) -> Runtime:
        if not settings.redis_url:
            raise ValueError(
                "settings.redis_url is not set: start the embedded Redis or set REDIS_URL"
            )
        data = data_client(settings.redis_url, health_check_interval=30)
        queue = redis.Redis.from_url(settings.resolved_queue_url(), health_check_interval=30)
        disk = DiskSpace(settings.watched_paths(), settings.min_free_mb)
        event_log = RedisEventLog(data, settings.idempotency_ttl, settings.write_replicas)
        snapshots = with_rungs(
            RedisSnapshotStore(data, settings.ladder()),
            settings.snapshot_rungs,
            settings.rung_events,
            settings.rungs_kept,
            event_log.epoch,
            settings.disk_budget,
            (settings.snapshot_cache,) if settings.snapshot_cache else (),
        )
        return cls(
            settings,
            with_disk_guard(event_log, disk),
            cached_store(snapshots, settings.snapshot_cache, settings.tenant),
            queue,
            closers=[data.close, queue.close],
            keys=RedisKeyStore(data),
            rates=_rate_storage(settings.redis_url, data),
            disk=disk,
        )

    @classmethod
    def in_memory(cls, settings: Settings, clock: Callable[[], float] = time.monotonic) -> Runtime:
        return cls(
            settings,
            InMemoryEventLog(),
            InMemorySnapshotStore(settings.ladder()),
            None,
            clock,
        )

    def queue(self, name: str = FOLD_QUEUE) -> Queue:
        if self.queue_connection is None:
            raise RuntimeError("an in-memory runtime has no job queue: call the job directly")
        return Queue(name, connection=self.queue_connection, serializer=JSONSerializer)

    def queues(self) -> list[Queue]:
        """Every queue of assocmem's jobs, in the order a worker takes them."""
        return [self.queue(name) for name in QUEUES] if self.queue_connection else []

    def close(self) -> None:
        for close in self.closers:
            close()


def _rate_storage(url: str, data: DataClient) -> Storage:
    """The per-key rate counters, in the data Redis (a cluster spreads them by key)."""
    if is_cluster_url(url):
        return RedisClusterStorage(url, key_prefix=RATES_PREFIX)
    return RedisStorage(url, connection_pool=data.connection_pool, key_prefix=RATES_PREFIX)


_current: Runtime | None = None


def use_runtime(runtime: Runtime) -> None:
    """Set the runtime that jobs run in (the worker process calls this at start)."""
    global _current
    _current = runtime


def current_runtime() -> Runtime:
    if _current is None:
        raise RuntimeError("no runtime: the worker must call use_runtime() before running jobs")
    return _current
