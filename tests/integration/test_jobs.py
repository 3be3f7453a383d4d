"""The pipeline's jobs as `assocmem jobs` shows them: queued, failed with the error, and a
failed one queued again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
from rq import Retry
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.serializers import JSONSerializer

from assocmem.api.cli import render
from assocmem.api.http.responses import jobs_view
from assocmem.workers.app.history_jobs import REPLAY_JOB, enqueue_history
from assocmem.workers.jobs import scheduler
from assocmem.workers.jobs.job_list import list_jobs, requeue
from assocmem.workers.jobs.scheduler import FAILED_FOLD_PAUSE, FOLD_JOB, FOLD_RETRIES, enqueue_fold
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.runtime.worker import HEARTBEAT_TTL, MAINTENANCE_INTERVAL, HeartbeatWorker
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE, QUEUES, fold_job_id
from tests.stores import work, write


def test_a_queued_fold_job_is_listed_and_a_failed_job_shows_its_error_and_can_be_requeued(
    runtime: Runtime,
) -> None:
    write(runtime, ["a", "b"])
    assert enqueue_fold(runtime, "default")
    queued = list_jobs(runtime)
    assert [(j.id, j.state, j.queue, j.args) for j in queued] == [
        ("fold-default", "queued", QUEUES[0], ["default"])
    ]
    assert queued[0].retries_left == FOLD_RETRIES.max
    runtime.queue().enqueue_call(
        "assocmem.workers.jobs.fold_job.no_such_job", args=("default",), job_id="broken"
    )
    work(runtime)
    failed = [j for j in list_jobs(runtime) if j.state == "failed"]
    assert [j.id for j in failed] == ["broken"]
    assert "no_such_job" in (failed[0].error or "")
    assert requeue(runtime, "broken").state == "queued"
    assert [j.state for j in list_jobs(runtime)] == ["queued"]


def test_a_job_refused_for_what_it_asked_shows_the_reason_alone(runtime: Runtime) -> None:
    enqueue_history(runtime, REPLAY_JOB, "replay-empty", "empty", None)
    work(runtime)
    [failed] = list_jobs(runtime)
    assert failed.error == "the log of 'empty' is empty: nothing to replay"


def test_a_fold_that_failed_for_good_is_queued_again_with_its_retries(runtime: Runtime) -> None:
    """A failed job keeps its id: the scheduler's next enqueue used to be refused as a
    duplicate for the failure's whole TTL, leaving the tenant without snapshots. Queued again
    with no retries left, one more killed worker failed it for good at once."""
    write(runtime, ["a", "b"])
    queue = runtime.queue()
    job = queue.enqueue_call(FOLD_JOB, args=("default",), job_id=fold_job_id("default"))
    queue.remove(job)
    job.retries_left = 0
    job.ended_at = datetime.now(UTC) - timedelta(seconds=FAILED_FOLD_PAUSE + 1)
    job.set_status(JobStatus.FAILED)
    job.save()
    FailedJobRegistry(queue=queue).add(job, ttl=3600)
    assert enqueue_fold(runtime, "default")
    assert queue.job_ids == [fold_job_id("default")]
    assert queue.fetch_job(fold_job_id("default")).retries_left == FOLD_RETRIES.max
    assert not enqueue_fold(runtime, "default")  # queued now: one is enough


def test_a_job_whose_worker_was_killed_is_abandoned_once_its_heartbeat_lapses(
    runtime: Runtime, settings: Settings
) -> None:
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call("time.sleep", args=(30,), job_id="slow", timeout=600, retry=Retry(1))
    expiry = _killed_while_running(runtime, settings)
    assert expiry <= time.time() + HEARTBEAT_TTL + 1  # not the job's 600 s timeout
    assert Job.fetch("slow", runtime.queue_connection, queue.serializer).get_status() == (
        JobStatus.QUEUED
    )


def test_a_job_whose_worker_died_says_so_and_how_to_run_it_again(
    runtime: Runtime, settings: Settings
) -> None:
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call("time.sleep", args=(30,), job_id="orphan", timeout=600)
    _killed_while_running(runtime, settings)
    [failed] = list_jobs(runtime)
    assert (failed.state, failed.id) == ("failed", "orphan")
    assert failed.error == (
        "its worker ended while it ran (killed, or its machine stopped):"
        " `assocmem jobs --requeue orphan` runs it again"
    )


def _killed_while_running(runtime: Runtime, settings: Settings) -> float:
    """A worker takes the maintenance queue's job and is killed while it runs; then
    maintenance finds the job's heartbeat lapsed. Returns when the heartbeat would lapse."""
    registry = StartedJobRegistry(queue=runtime.queue(MAINTENANCE_QUEUE))
    env = {**os.environ, "REDIS_URL": settings.redis_url or ""}
    worker = subprocess.Popen(
        [sys.executable, "-m", "assocmem.api.cli", "worker", "--burst"], env=env
    )
    try:
        deadline = time.monotonic() + 30
        # started, not only registered: RQ registers the run a moment before it marks the job
        # started, and its cleanup drops, unfailed, a registered job that was never started
        while not _started(runtime, registry):
            assert time.monotonic() < deadline, "the worker never started the job"
            time.sleep(0.1)
        connection = runtime.queue_connection
        assert connection is not None
        [(_, expiry)] = connection.zrange(registry.key, 0, -1, withscores=True)
    finally:
        worker.kill()
        worker.wait(10)
    registry.cleanup(timestamp=time.time() + HEARTBEAT_TTL + 1)  # what maintenance does then
    return expiry


def _started(runtime: Runtime, registry: StartedJobRegistry) -> bool:
    ids = registry.get_job_ids()
    if not ids:
        return False
    job = Job.fetch(ids[0], runtime.queue_connection, registry.serializer)
    return job.get_status() == JobStatus.STARTED


def test_a_job_waiting_for_its_retry_says_when_and_why(runtime: Runtime) -> None:
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call(
        "assocmem.workers.jobs.fold_job.no_such_job",
        job_id="flaky",
        retry=Retry(max=2, interval=60),
    )
    before = datetime.now(UTC)
    HeartbeatWorker(queue, connection=queue.connection, serializer=JSONSerializer).work(burst=True)
    after = datetime.now(UTC)
    [job] = list_jobs(runtime)
    assert (job.id, job.state, job.queue, job.retries_left) == ("flaky", "scheduled", queue.name, 1)
    assert job.retry_at is not None
    # The interval after the failure, whenever the worker got to it (RQ counts whole seconds)
    second = timedelta(seconds=1)
    assert before + 60 * second - second <= job.retry_at <= after + 60 * second + second
    assert job.error is not None and "no_such_job" in job.error
    shown = render.jobs(jobs_view([job])).splitlines()  # as `assocmem jobs` prints it
    at = job.retry_at.strftime("%H:%M:%S UTC")
    assert shown[1:] == [
        f"          next try at {at}; 1 more retry if that fails",
        f"          {job.error}",
    ]


def test_a_retry_waiting_for_its_interval_is_run_when_due(
    runtime: Runtime, settings: Settings
) -> None:
    """RQ parks a retry with an interval in its scheduled registry: without a scheduler the
    job waited there for ever, and its id refused every later fold of the tenant."""
    queue = runtime.queue()
    queue.enqueue_call(
        "assocmem.workers.jobs.fold_job.no_such_job", job_id="flaky", retry=Retry(max=1, interval=1)
    )
    env = {**os.environ, "REDIS_URL": settings.redis_url or ""}
    worker = subprocess.Popen([sys.executable, "-m", "assocmem.api.cli", "worker"], env=env)
    try:
        connection = runtime.queue_connection
        assert connection is not None
        deadline = time.monotonic() + 30
        while Job.fetch("flaky", connection, queue.serializer).get_status() != JobStatus.FAILED:
            assert time.monotonic() < deadline, "the retry never ran"
            time.sleep(0.2)
        assert Job.fetch("flaky", connection, queue.serializer).retries_left == 0
    finally:
        worker.terminate()
        # Beside two busy cores, a SIGTERM that lands in the worker's wait for a job was
        # once swallowed there: it stopped when the wait ended (MAINTENANCE_INTERVAL, 60 s)
        worker.wait(MAINTENANCE_INTERVAL + 30)


def test_a_job_run_before_by_a_killed_worker_still_finishes_cleanly(runtime: Runtime) -> None:
    """RQ lists a killed worker's run a minute after its record expired; finishing the job
    then raised, and a fold that had published was recorded as failed."""
    queue = runtime.queue(MAINTENANCE_QUEUE)
    job = queue.enqueue_call("time.sleep", args=(0,), job_id="rerun", result_ttl=0)
    connection = runtime.queue_connection
    assert connection is not None
    connection.zadd(job.execution_registry.key, {"killed-run": time.time() + 120})
    HeartbeatWorker(queue, connection=connection, serializer=JSONSerializer).work(burst=True)
    assert not connection.exists(job.key)  # finished, its result discarded
    assert FailedJobRegistry(queue=queue).get_job_ids() == []


def test_a_fold_job_a_killed_worker_took_from_the_queue_is_replaced(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker on several queues pops a job (BLPOP) before it records it as started: killed
    between the two, it left the job in no queue and no registry, and its id refused every
    later fold of the tenant for ever (CI's fault-injection run waited 300 s on it)."""
    write(runtime, ["a", "b"])
    queue = runtime.queue()
    assert enqueue_fold(runtime, "default")
    connection = runtime.queue_connection
    assert connection is not None
    connection.lrem(queue.key, 0, fold_job_id("default"))  # popped by the worker that died
    suspects: dict[str, float] = {}
    assert not enqueue_fold(runtime, "default", suspects)  # maybe a live worker: wait
    assert fold_job_id("default") in suspects
    monkeypatch.setattr(scheduler, "ORPHAN_GRACE", 0.0)
    assert enqueue_fold(runtime, "default", suspects)
    assert queue.job_ids == [fold_job_id("default")]
    assert not enqueue_fold(runtime, "default", suspects)  # queued now: left alone
    assert not suspects
