"""assocmem's jobs as RQ keeps them: queued, running, scheduled for a retry, and failed with
their error; a failed one can be queued again."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from assocmem.workers import errors
from assocmem.workers.errors import ApplicationError, InvalidRequest, UnknownJob
from assocmem.workers.runtime.services import Runtime

SHOWN = 200
"""Jobs listed per queue and state."""
KEPT = 7 * 24 * 3600
"""Seconds a finished job's result is kept."""
FAILURE_KEPT = 30 * 24 * 3600
"""Seconds a failed job (and its error) is kept."""


@dataclasses.dataclass(frozen=True, slots=True)
class JobInfo:
    id: str
    queue: str
    state: str
    """queued, running, scheduled (waiting for a retry) or failed."""
    function: str
    args: list[object]
    enqueued_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    error: str | None
    """The last line of the failure's traceback (of a failed job, or of the attempt that a
    scheduled one retries, if it raised: a job whose worker died raised nothing)."""
    retries_left: int | None
    progress: dict[str, Any] | None = None
    """What a long job reports while it runs: its phase and the share done (0-1)."""
    result: dict[str, Any] | None = None
    """A finished job's return value (a consolidation's report)."""
    retry_at: datetime | None = None
    """When a scheduled job is queued again."""


_STATES = {
    JobStatus.QUEUED: "queued",
    JobStatus.STARTED: "running",
    JobStatus.SCHEDULED: "scheduled",
    JobStatus.DEFERRED: "queued",
    JobStatus.FAILED: "failed",
    JobStatus.FINISHED: "finished",
    JobStatus.STOPPED: "failed",
    JobStatus.CANCELED: "failed",
}


LAST_ERROR = "last_error"
"""In a job's meta: the last line of its latest attempt's traceback (the worker writes it)."""


def job_info(runtime: Runtime, job_id: str) -> JobInfo:
    """One job by id, whatever its state; UnknownJob if no job has that id."""
    for queue in runtime.queues():
        try:
            job = Job.fetch(job_id, queue.connection, queue.serializer)
        except (NoSuchJobError, ValueError):  # ValueError: no id RQ could have given
            continue
        status = job.get_status(refresh=False)
        state = _STATES.get(status, "queued") if status is not None else "queued"
        return _info(job, queue, state)
    raise unknown_job(job_id)


def unknown_job(job_id: str) -> UnknownJob:
    return UnknownJob(f"job {job_id!r} is unknown: expected an id `assocmem jobs` lists")


def enqueue_once(
    runtime: Runtime,
    queue: str,
    function: str,
    job_id: str,
    args: tuple[object, ...],
    timeout: int,
    retry: Retry | None = None,
    result_ttl: int = KEPT,
) -> str:
    """Queue `function(*args)` under `job_id`, unless a job has that id already (queued,
    running or kept as done): the same job enqueued twice runs once. Returns the id."""
    try:
        runtime.queue(queue).enqueue_call(
            function,
            args=args,
            job_id=job_id,
            unique=True,
            result_ttl=result_ttl,
            failure_ttl=FAILURE_KEPT,
            timeout=timeout,
            retry=retry,
        )
    except DuplicateJobError:
        pass
    return job_id


def list_jobs(runtime: Runtime) -> list[JobInfo]:
    found: list[JobInfo] = []
    for queue in runtime.queues():
        registries = [
            ("queued", queue.get_job_ids(0, SHOWN - 1)),
            ("running", StartedJobRegistry(queue=queue).get_job_ids(0, SHOWN - 1)),
            ("scheduled", ScheduledJobRegistry(queue=queue).get_job_ids(0, SHOWN - 1)),
            ("failed", FailedJobRegistry(queue=queue).get_job_ids(0, SHOWN - 1)),
        ]
        for state, ids in registries:
            for job in Job.fetch_many(
                [i.split(":")[0] for i in ids], queue.connection, queue.serializer
            ):
                if job is not None:
                    found.append(_info(job, queue, state))
    return found


def requeue(runtime: Runtime, job_id: str) -> JobInfo:
    """Queue a failed job again; InvalidRequest if no failed job has that id."""
    for queue in runtime.queues():
        registry = FailedJobRegistry(queue=queue)
        try:
            registry.requeue(job_id)
        except (NoSuchJobError, InvalidJobOperation, ValueError):
            continue
        job = Job.fetch(job_id, queue.connection, queue.serializer)
        return _info(job, queue, "queued")
    raise InvalidRequest(
        f"job {job_id!r} is not a failed job: expected an id `assocmem jobs` lists"
    )


def _said(line: str, job_id: str) -> str:
    """The last line of a job's traceback; of an error in what was asked (an
    ApplicationError), its message alone: the job did what it could; of a job whose worker
    died, what that means (RQ says "Moved to FailedJobRegistry, due to AbandonedJobError")."""
    if "AbandonedJobError" in line:
        return (
            "its worker ended while it ran (killed, or its machine stopped):"
            f" `assocmem jobs --requeue {job_id}` runs it again"
        )
    name, _, message = line.partition(": ")
    module, _, kind = name.rpartition(".")
    known = getattr(errors, kind, None) if module == errors.__name__ else None
    return message if isinstance(known, type) and issubclass(known, ApplicationError) else line


def _info(job: Job, queue: Queue, state: str) -> JobInfo:
    latest = job.latest_result() if state == "failed" else None
    error = latest.exc_string if latest is not None else None
    last = error.strip().splitlines()[-1] if error else None
    if state == "scheduled":
        last = job.meta.get(LAST_ERROR) or None
    last = _said(last, job.id) if last else None
    return JobInfo(
        job.id,
        job.origin or queue.name,
        state,
        job.func_name,
        list(job.args),
        job.enqueued_at,
        job.started_at,
        job.ended_at,
        last,
        job.retries_left,
        job.meta.get("progress"),
        job.return_value() if state == "finished" else None,
        _retry_at(job, queue) if state == "scheduled" else None,
    )


def _retry_at(job: Job, queue: Queue) -> datetime | None:
    registry = ScheduledJobRegistry(
        job.origin, connection=job.connection, serializer=queue.serializer
    )
    try:
        return registry.get_scheduled_time(job)
    except NoSuchJobError:  # queued meanwhile
        return None
