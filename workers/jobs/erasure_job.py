"""The erasure as an RQ job on the maintenance queue: its report is the job's result."""

from __future__ import annotations

from rq import Retry

from assocmem.workers.job_progress import job_progress
from assocmem.workers.jobs.erasure import Subject, erase
from assocmem.workers.jobs.job_list import enqueue_once
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE

ERASE_JOB = "assocmem.workers.jobs.erasure_job.erase_subject"
ERASE_TIMEOUT = 3600
ERASE_RETRIES = Retry(max=3, interval=[30, 120, 600])
"""A rewrite is safe to run again: a retry finds fewer (or no) events of the subject."""


def erase_subject(tenant: str, kind: str, digest: str) -> dict[str, object]:
    """RQ entry point."""
    return erase(current_runtime(), tenant, Subject(kind, digest), job_progress()).as_dict()


def enqueue_erasure(runtime: Runtime, tenant: str, subject: Subject, job_id: str) -> str:
    return enqueue_once(
        runtime,
        MAINTENANCE_QUEUE,
        ERASE_JOB,
        job_id,
        (tenant, subject.kind, subject.digest),
        ERASE_TIMEOUT,
        ERASE_RETRIES,
    )
