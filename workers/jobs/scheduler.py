"""Enqueues a fold job for every tenant whose log has events not yet in a snapshot."""

from __future__ import annotations

import contextlib
import logging
import threading
import time

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from assocmem.workers.runtime.services import Runtime
from assocmem.workers.store.redis.errors import Outage
from assocmem.workers.store.redis.keys import fold_job_id

log = logging.getLogger(__name__)

FOLD_JOB = "assocmem.workers.jobs.fold_job.fold_tenant"
FOLD_TIMEOUT = 600
"""Seconds a fold job may run (a fold from zero of a million events takes about a minute
and a half here). A job whose worker died is seen as abandoned once its heartbeat lapses,
and retried at the next maintenance round of a worker (workers/runtime/worker.py)."""
FAILED_FOLD_PAUSE = 60.0
"""Seconds a fold that failed for good rests before new events queue it again."""
ORPHAN_GRACE = 10.0
"""Seconds a fold job must stay in no queue and no registry before it is replaced: a worker
killed after taking it from the queue and before starting it leaves it there, its id
refusing every later fold of the tenant (the gap is milliseconds for a live worker)."""
FOLD_RETRIES = Retry(max=3, interval=[1, 5, 30])
"""A failed fold job is tried again after 1, 5 and 30 seconds, then left failed
(`assocmem jobs` shows it, with its error, and can requeue it)."""


def enqueue_fold(runtime: Runtime, tenant: str, suspects: dict[str, float] | None = None) -> bool:
    """Enqueue one fold job for `tenant` unless one is queued or running (one job id per tenant).

    A fold that failed for good (its retries spent, or its worker killed once per retry) keeps
    its id in the failed registry, where `assocmem jobs` shows its error; while the tenant's
    fold flag is up it is queued again, with its retries, once FAILED_FOLD_PAUSE has passed,
    rather than leave the tenant without snapshots until someone requeues it. A job in no
    queue or registry for ORPHAN_GRACE (`suspects` remembers since when) is replaced."""
    queue = runtime.queue()
    job_id = fold_job_id(tenant)
    try:
        queue.enqueue_call(
            FOLD_JOB,
            args=(tenant,),
            job_id=job_id,
            unique=True,
            result_ttl=0,
            failure_ttl=7 * 24 * 3600,
            timeout=FOLD_TIMEOUT,
            retry=FOLD_RETRIES,
        )
    except DuplicateJobError:
        if _requeue_if_failed(queue, job_id):
            return True
        if suspects is None or not _orphaned(queue, job_id, suspects):
            return False
        log.warning("fold job %s was in no queue or registry; queueing it anew", job_id)
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(job_id, queue.connection, queue.serializer).delete()
        return enqueue_fold(runtime, tenant)
    return True


def _orphaned(queue: Queue, job_id: str, suspects: dict[str, float]) -> bool:
    """Whether the job has been in no queue and no registry for ORPHAN_GRACE seconds."""
    started = StartedJobRegistry(queue=queue).get_job_ids()
    tracked = (
        job_id in queue.get_job_ids()
        or any(entry.split(":")[0] == job_id for entry in started)
        or job_id in ScheduledJobRegistry(queue=queue).get_job_ids()
        or job_id in FailedJobRegistry(queue=queue).get_job_ids()
    )
    if tracked:
        suspects.pop(job_id, None)
        return False
    first = suspects.setdefault(job_id, time.monotonic())
    if time.monotonic() - first < ORPHAN_GRACE:
        return False
    del suspects[job_id]
    return True


def _requeue_if_failed(queue: Queue, job_id: str) -> bool:
    try:
        job = Job.fetch(job_id, queue.connection, queue.serializer)
    except NoSuchJobError:
        return False
    if job.get_status(refresh=False) != JobStatus.FAILED:
        return False
    ended = job.ended_at.timestamp() if job.ended_at else 0.0
    if time.time() - ended < FAILED_FOLD_PAUSE:
        return False
    result = job.latest_result()
    error = result.exc_string.strip().splitlines()[-1] if result and result.exc_string else "?"
    log.warning("fold job %s failed for good (%s); queueing it again", job_id, error)
    job.retries_left = FOLD_RETRIES.max
    try:
        FailedJobRegistry(queue=queue).requeue(job)
    except (NoSuchJobError, InvalidJobOperation):
        return False  # requeued by another scheduler meanwhile
    return True


def schedule_folds(runtime: Runtime, suspects: dict[str, float] | None = None) -> list[str]:
    """One pass: enqueue folds for flagged tenants; returns the tenants enqueued."""
    wanted = runtime.log.tenants_to_fold(runtime.clock())
    return [tenant for tenant in wanted if enqueue_fold(runtime, tenant, suspects)]


def run_scheduler(runtime: Runtime, stop: threading.Event) -> None:
    suspects: dict[str, float] = {}
    outage = Outage("fold scheduling")
    while not stop.wait(runtime.settings.fold_interval):
        try:
            schedule_folds(runtime, suspects)
            outage.passed()
        except Exception as exc:  # the loop must outlive a Redis hiccup; it retries next tick
            outage.failed(exc, runtime.settings.fold_interval)
