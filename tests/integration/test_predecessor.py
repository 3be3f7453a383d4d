"""A worker started in place of one killed mid-job retries that job as it starts, as `up`
restarts its workers: not after the job's heartbeat lapses and a maintenance round."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
import redis
from rq import Retry, Worker
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from assocmem.workers.keys import MAINTENANCE_QUEUE
from assocmem.workers.predecessor import predecessor_env
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings
from assocmem.workers.worker import HEARTBEAT_TTL

Start = Callable[[dict[str, str]], subprocess.Popen[bytes]]


@pytest.fixture
def start_worker(settings: Settings) -> Iterator[Start]:
    """Starts `assocmem worker` processes (with more variables), killed at the end."""
    started: list[subprocess.Popen[bytes]] = []

    def start(more: dict[str, str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, "REDIS_URL": settings.redis_url or "", **more}
        started.append(
            subprocess.Popen([sys.executable, "-m", "assocmem.api.cli", "worker"], env=env)
        )
        return started[-1]

    yield start
    for process in started:
        process.kill()
        process.wait(30)


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@dataclasses.dataclass
class KilledMidJob:
    """A worker killed while it ran the job "long" (one retry left), and when it was."""

    pid: int
    born_before: float
    """A time before the worker was born."""
    killed: float
    connection: redis.Redis

    def job(self) -> Job:
        return Job.fetch("long", connection=self.connection, serializer=JSONSerializer)


@pytest.fixture
def killed_mid_job(runtime: Runtime, start_worker: Start) -> KilledMidJob:
    connection = runtime.queue_connection
    assert connection is not None
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call("time.sleep", args=(600,), job_id="long", retry=Retry(max=1))
    born_before = time.time()
    first = start_worker({})
    killed = KilledMidJob(first.pid, born_before, 0.0, connection)
    wait_for(lambda: killed.job().get_status() == JobStatus.STARTED, 60, "the job never started")
    first.kill()
    first.wait(30)
    killed.killed = time.monotonic()
    return killed


def test_a_worker_started_in_place_of_a_killed_one_retries_its_job_at_once(
    killed_mid_job: KilledMidJob, start_worker: Start
) -> None:
    dead = killed_mid_job
    start_worker(predecessor_env(dead.pid, time.time()))

    # Run again, by the new worker, on its one retry: before the heartbeat could even lapse
    wait_for(
        lambda: dead.job().retries_left == 0 and dead.job().get_status() == JobStatus.STARTED,
        HEARTBEAT_TTL - 5,
        "the job was not retried as the new worker started",
    )
    assert time.monotonic() - dead.killed < HEARTBEAT_TTL


@pytest.mark.parametrize("named", ["another pid", "a worker born after it died"])
def test_a_worker_told_of_another_predecessor_leaves_a_killed_one_s_job_to_its_heartbeat(
    killed_mid_job: KilledMidJob, start_worker: Start, named: str
) -> None:
    """Told of another pid, or of a pid that died before the worker with that pid was born
    (a pid taken again), a new worker cannot tell the dead worker from a live one: the job
    waits for its heartbeat to lapse."""
    dead = killed_mid_job
    if named == "another pid":
        second = start_worker(predecessor_env(dead.pid + 1, time.time()))
    else:
        second = start_worker(predecessor_env(dead.pid, dead.born_before))
    # It looks for its predecessor's jobs before it registers itself
    wait_for(
        lambda: any(w.pid == second.pid for w in Worker.all(connection=dead.connection)),
        60,
        "the new worker never registered",
    )
    assert (dead.job().retries_left, dead.job().get_status()) == (1, JobStatus.STARTED)
