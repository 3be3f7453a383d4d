"""Replays and link audits as jobs on the replay queue.

A replay folds the whole log (a minute and more at a million events), and an audit reads
it whole when the worker has no folded state of the tenant: longer than an HTTP request
should wait, and work a worker should do rather than the API. The job's metadata
holds how far it has got, its result the same record the API's direct routes answer.
"""

from __future__ import annotations

from typing import Any

from assocmem.engine.principal import Principal
from assocmem.workers.app.history import History
from assocmem.workers.app.history_records import link_audit_record, verification_record
from assocmem.workers.app.request_values import parse_point
from assocmem.workers.job_progress import job_progress
from assocmem.workers.jobs.job_list import enqueue_once
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.store.redis.keys import REPLAY_QUEUE

REPLAY_JOB = "assocmem.workers.app.history_jobs.replay"
AUDIT_LINK_JOB = "assocmem.workers.app.history_jobs.audit_link"
HISTORY_TIMEOUT = 3600
"""Seconds a replay or an audit may run."""
RESULT_TTL = 24 * 3600
"""Seconds a finished job's answer is kept."""


def replay(tenant: str, until: str | None) -> dict[str, Any]:
    """RQ entry point: the replay from zero checked against the served state."""
    report = job_progress()
    upto = parse_point(until, "until") if until is not None else None
    found = History(current_runtime()).verify(
        _principal(tenant), upto, lambda done: report("replaying", done)
    )
    return verification_record(found)


def audit_link(tenant: str, source: str, target: str) -> dict[str, Any]:
    """RQ entry point: every event that changed the link source -- target."""
    report = job_progress()
    history = History(current_runtime()).link(
        _principal(tenant), source, target, lambda done: report("auditing", done)
    )
    return link_audit_record(history)


def enqueue_history(runtime: Runtime, function: str, job_id: str, *args: object) -> str:
    return enqueue_once(
        runtime, REPLAY_QUEUE, function, job_id, args, HISTORY_TIMEOUT, result_ttl=RESULT_TTL
    )


def _principal(tenant: str) -> Principal:
    return Principal(tenant, "history")
