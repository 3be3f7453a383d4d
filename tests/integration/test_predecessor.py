"""A worker started in place of one killed mid-job retries that job as it starts, as `up`
restarts its workers: not after the job's heartbeat lapses and a maintenance round. The
tests keep the dead run's heartbeat alive, so that only the new worker can retry it."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
import redis
from rq import Retry
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

from assocmem.workers.jobs.predecessor import predecessor_env
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.runtime.worker import MAINTENANCE_INTERVAL
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE

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
    """A worker killed while it ran the job "long" (one retry left)."""

    pid: int
    born_before: float
    """A time before the worker was born."""
    connection: redis.Redis

    def job(self) -> Job:
        return Job.fetch("long", connection=self.connection, serializer=JSONSerializer)


@pytest.fixture
def killed_mid_job(runtime: Runtime, start_worker: Start) -> KilledMidJob:
    """The dead run's heartbeat is then made to last an hour: only a new worker told of
    its predecessor retries the job while the test runs, however slow the machine."""
    connection = runtime.queue_connection
    assert connection is not None
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call("time.sleep", args=(600,), job_id="long", retry=Retry(max=1))
    born_before = time.time()
    first = start_worker({})
    killed = KilledMidJob(first.pid, born_before, connection)
    wait_for(lambda: killed.job().get_status() == JobStatus.STARTED, 60, "the job never started")
    first.kill()
    first.wait(30)
    registry = StartedJobRegistry(queue=queue)
    for run in connection.zrange(registry.key, 0, -1):
        connection.zadd(registry.key, {run: time.time() + 3600}, xx=True)
    return killed


def test_a_worker_started_in_place_of_a_killed_one_retries_its_job_at_once(
    killed_mid_job: KilledMidJob, start_worker: Start
) -> None:
    dead = killed_mid_job
    start_worker(predecessor_env(dead.pid, time.time()))
    # Run again, by the new worker, on its one retry, the heartbeat of the dead run still on
    wait_for(
        lambda: dead.job().retries_left == 0 and dead.job().get_status() == JobStatus.STARTED,
        60,
        "the job was not retried as the new worker started",
    )


@pytest.mark.parametrize("named", ["another pid", "a worker born after it died"])
def test_a_worker_told_of_another_predecessor_leaves_a_killed_one_s_job_to_its_heartbeat(
    runtime: Runtime, killed_mid_job: KilledMidJob, start_worker: Start, named: str
) -> None:
    """Told of another pid, or of a pid that died before the worker with that pid was born
    (a pid taken again), a new worker cannot tell the dead worker from a live one: the job
    waits for its heartbeat to lapse."""
    dead = killed_mid_job
    if named == "another pid":
        start_worker(predecessor_env(dead.pid + 1, time.time()))
    else:
        start_worker(predecessor_env(dead.pid, dead.born_before))
    run_behind_maintenance(runtime)
    assert (dead.job().retries_left, dead.job().get_status()) == (1, JobStatus.STARTED)


def test_an_idle_worker_retries_a_job_whose_heartbeat_lapses_at_its_next_maintenance(
    runtime: Runtime, killed_mid_job: KilledMidJob, start_worker: Start
) -> None:
    """RQ runs its maintenance between two waits for a job, and waited 405 s: an idle
    worker left a killed worker's job that long, where the README promises a minute."""
    dead = killed_mid_job
    start_worker({})
    run_behind_maintenance(runtime)  # it has run the maintenance it runs as it starts
    registry = StartedJobRegistry(queue=runtime.queue(MAINTENANCE_QUEUE))
    for run in dead.connection.zrange(registry.key, 0, -1):
        dead.connection.zadd(registry.key, {run: time.time()}, xx=True)  # lapsed now
    wait_for(
        lambda: dead.job().retries_left == 0 and dead.job().get_status() == JobStatus.STARTED,
        2 * MAINTENANCE_INTERVAL,
        "an idle worker did not retry the job whose heartbeat had lapsed",
    )


def run_behind_maintenance(runtime: Runtime) -> None:
    """Queue a job and wait until it has run: a worker runs its maintenance (due as it
    starts) before it takes a job."""
    queue = runtime.queue(MAINTENANCE_QUEUE)
    marker = queue.enqueue_call("time.sleep", args=(0,), job_id="marker")
    wait_for(lambda: marker.get_status() == JobStatus.FINISHED, 60, "no worker ran the job")
