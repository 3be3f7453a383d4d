"""Enqueues a fold job for every tenant whose log has events not yet in a snapshot."""

from __future__ import annotations

import logging
import threading

from rq import Retry
from rq.exceptions import DuplicateJobError

from .keys import fold_job_id
from .runtime import Runtime

log = logging.getLogger(__name__)

FOLD_JOB = "assocmem.workers.fold_job.fold_tenant"
FOLD_TIMEOUT = 600
"""Seconds a fold job may run (a fold from zero of a million events takes about a minute
and a half here). A job whose worker died is seen as abandoned once this has passed, and
retried at the next maintenance round of a worker (workers/worker.py)."""
FOLD_RETRIES = Retry(max=3, interval=[1, 5, 30])
"""A failed fold job is tried again after 1, 5 and 30 seconds, then left failed
(`assocmem jobs` shows it, with its error, and can requeue it)."""


def enqueue_fold(runtime: Runtime, tenant: str) -> bool:
    """Enqueue one fold job for `tenant` unless one is queued or running (one job id per tenant)."""
    try:
        runtime.queue().enqueue_call(
            FOLD_JOB,
            args=(tenant,),
            job_id=fold_job_id(tenant),
            unique=True,
            result_ttl=0,
            failure_ttl=7 * 24 * 3600,
            timeout=FOLD_TIMEOUT,
            retry=FOLD_RETRIES,
        )
    except DuplicateJobError:
        return False
    return True


def schedule_folds(runtime: Runtime) -> list[str]:
    """One pass: enqueue folds for flagged tenants; returns the tenants enqueued."""
    enqueued = []
    for tenant in runtime.log.tenants():
        if runtime.log.is_fold_wanted(tenant) and enqueue_fold(runtime, tenant):
            enqueued.append(tenant)
    return enqueued


def run_scheduler(runtime: Runtime, stop: threading.Event) -> None:
    while not stop.wait(runtime.settings.fold_interval):
        try:
            schedule_folds(runtime)
        except Exception:  # the loop must outlive a Redis hiccup; it retries next tick
            log.exception(
                "fold scheduling failed; retrying in %.1f s", runtime.settings.fold_interval
            )
