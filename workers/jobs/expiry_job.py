"""The expiry pass: the memories whose `expires_at` has passed are erased for real, their
writes taken out of the log as `forget` takes a subject's (workers/jobs/erasure.py). Reads
stop returning a memory the moment it expires; this pass, run nightly by the cron (or on
demand: `assocmem expire`), is what leaves nothing of it in Redis or on disk."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from assocmem.engine.recall.expiry import expired
from assocmem.workers.job_progress import Report, job_progress
from assocmem.workers.jobs.erasure import MEMORY, Subject, erase
from assocmem.workers.jobs.job_list import enqueue_once
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.state.rebuild import Rebuild, rebuild
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE

log = logging.getLogger(__name__)

EXPIRY_JOB = "assocmem.workers.jobs.expiry_job.expire_tenant"
EXPIRY_TIMEOUT = 3600


def expire_tenant(tenant: str) -> dict[str, object]:
    """RQ entry point."""
    return expire(current_runtime(), tenant, job_progress())


def expire(
    runtime: Runtime,
    tenant: str,
    progress: Report | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, object]:
    """Erase the tenant's expired memories; what was erased (`expired`: their ids)."""
    say = progress or (lambda phase, done: None)
    say("reading the state", 0.0)
    now = clock()
    state = rebuild(runtime.log, runtime.snapshots, tenant, Rebuild())
    rows = np.flatnonzero(expired(state, now, np.arange(len(state.rows), dtype=np.int64)))
    ids = [state.rows.id_of(int(row)) for row in rows]
    if not ids:
        say("done", 1.0)
        return {"tenant": tenant, "expired": [], "erasure": None}
    report = erase(runtime, tenant, Subject(MEMORY, ",".join(ids)), progress)
    log.info("expiry in %s: %d memories erased", tenant, len(ids))
    return {"tenant": tenant, "expired": ids, "erasure": report.as_dict()}


def enqueue_expiry(runtime: Runtime, tenant: str, job_id: str) -> str:
    """Queue an expiry pass under `job_id`; one already queued, running or done under it is kept."""
    return enqueue_once(runtime, MAINTENANCE_QUEUE, EXPIRY_JOB, job_id, (tenant,), EXPIRY_TIMEOUT)
