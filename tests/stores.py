"""Runtimes for tests: in memory (no Redis, an injected clock) or on a real redis-server."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from rq.serializers import JSONSerializer

from assocmem.engine.events.envelope import Event
from assocmem.engine.position import Position
from assocmem.workers.runtime.services import Runtime, use_runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.runtime.worker import HeartbeatWorker

KINDS = ("memory", "redis")
CONTRACT_KINDS = (*KINDS, "cluster", "cluster3")
"""The store contract runs on a one-node Redis Cluster too (the queue on the plain one), and
on three masters with a replica each, through redis-py's cluster client."""


class Clock:
    """A clock tests move by hand: intervals pass without sleeping."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_runtime(request: pytest.FixtureRequest, kind: str, clock: Clock) -> Iterator[Runtime]:
    if kind == "memory":
        yield Runtime.in_memory(Settings(snapshot_every=1), clock)
        return
    settings: Settings = request.getfixturevalue("settings")
    if kind in ("cluster", "cluster3"):
        settings = dataclasses.replace(
            settings,
            redis_url=request.getfixturevalue(f"{kind}_url"),
            queue_url=settings.resolved_queue_url(),
            write_replicas=1 if kind == "cluster3" else 0,  # as `up --cluster` appends
        )
    runtime = Runtime.connect(settings)
    runtime.clock = clock
    yield runtime
    runtime.close()


def note(concepts: list[str], key: str | None = None, tenant: str = "default") -> Event:
    data = {"text": " ".join(concepts), "concepts": concepts, "importance": 3, "extractor": "t"}
    return Event("memory.written", tenant, "agent", 1.0, data, key=key)


def write(runtime: Runtime, *concept_sets: list[str], tenant: str = "default") -> list[Position]:
    return [
        a.position
        for a in runtime.log.append(tenant, [note(c, tenant=tenant) for c in concept_sets])
    ]


def work(runtime: Runtime) -> None:
    """Run the queued jobs in this process, as `up`'s worker in burst mode would (RQ's own
    SimpleWorker could wait a minute to stop: workers/runtime/worker.py PUBSUB_WAIT)."""
    use_runtime(runtime)
    worker = HeartbeatWorker(
        runtime.queues(), connection=runtime.queue_connection, serializer=JSONSerializer
    )
    worker.work(burst=True)
