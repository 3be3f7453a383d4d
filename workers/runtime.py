"""Connections and stores built once from settings, shared by jobs, the scheduler and the API."""

from __future__ import annotations

import dataclasses
import functools

import redis
from rq import Queue
from rq.serializers import JSONSerializer

from .event_log import EventLog
from .keys import QUEUE_NAME
from .settings import Settings
from .snapshot_store import SnapshotStore


@dataclasses.dataclass
class Runtime:
    settings: Settings
    data: redis.Redis
    queue_connection: redis.Redis

    @classmethod
    def connect(cls, settings: Settings) -> Runtime:
        if not settings.redis_url:
            raise ValueError(
                "settings.redis_url is not set: start the embedded Redis or set REDIS_URL"
            )
        data = redis.Redis.from_url(settings.redis_url, health_check_interval=30)
        queue = redis.Redis.from_url(settings.resolved_queue_url(), health_check_interval=30)
        return cls(settings, data, queue)

    @functools.cached_property
    def log(self) -> EventLog:
        return EventLog(self.data, self.settings.idempotency_ttl)

    @functools.cached_property
    def snapshots(self) -> SnapshotStore:
        return SnapshotStore(self.data, self.settings.snapshots_kept)

    def queue(self) -> Queue:
        return Queue(QUEUE_NAME, connection=self.queue_connection, serializer=JSONSerializer)


_current: Runtime | None = None


def use_runtime(runtime: Runtime) -> None:
    """Set the runtime that jobs run in (the worker process calls this at start)."""
    global _current
    _current = runtime


def current_runtime() -> Runtime:
    if _current is None:
        raise RuntimeError("no runtime: the worker must call use_runtime() before running jobs")
    return _current
