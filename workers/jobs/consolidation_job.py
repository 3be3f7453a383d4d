"""The sleep consolidation job: decide on the tenant's latest state, append one
links.consolidated event with the rule and every decision, and report what it did.

The fold applies the event (engine/events/consolidation.py), so every replica, every replay and
every `as_of` read sees the same consolidation at the same position. Run by the nightly
cron (workers/jobs/cron.py) or on demand (`assocmem consolidate --now`); the job's metadata
holds its progress while it runs.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from rq import Retry, get_current_job

from assocmem.engine.events.consolidation import Effect, Rule, decide
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.workers.job_progress import job_progress
from assocmem.workers.jobs.fold_job import folded_state
from assocmem.workers.jobs.job_list import enqueue_once
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE

log = logging.getLogger(__name__)

AGENT = "consolidation"
"""The agent of links.consolidated events."""
CONSOLIDATE_JOB = "assocmem.workers.jobs.consolidation_job.consolidate_tenant"
CONSOLIDATE_TIMEOUT = 1800
"""Seconds a consolidation may run: a minute or two at a million events here."""
CONSOLIDATE_RETRIES = Retry(max=2, interval=[60, 600])

PRUNED_SHOWN = 20

Progress = Callable[[str, float], None]


@dataclasses.dataclass(frozen=True, slots=True)
class Report:
    tenant: str
    decided_at: str
    """Position of the state the decision was made on."""
    appended_at: str | None
    """Position of the links.consolidated event; None for a dry run."""
    dry_run: bool
    rule: dict[str, object]
    effect: Effect
    seconds: float
    pruned: list[str]
    """The first PRUNED_SHOWN pruned concepts (the event holds them all)."""

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def consolidate_tenant(tenant: str, dry_run: bool = False) -> dict[str, object]:
    """RQ entry point; the job id doubles as the event's idempotency key (a retry of a job
    that appended before it died appends nothing new)."""
    job = get_current_job()
    key = f"consolidate:{job.id}" if job is not None else None
    return consolidate(current_runtime(), tenant, dry_run, key, job_progress()).as_dict()


def consolidate(
    runtime: Runtime,
    tenant: str,
    dry_run: bool = False,
    key: str | None = None,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
) -> Report:
    started = time.monotonic()
    say = progress or (lambda phase, done: None)
    say("loading", 0.0)
    state = folded_state(runtime, tenant)
    say("loading", 1.0)
    rule = Rule(at=clock(), **runtime.settings.consolidation.rule_values())
    decision, effect = decide(state, rule, lambda done: say("deciding", done))
    appended = None
    if not dry_run:
        data = LINKS_CONSOLIDATED.payload(
            decision=decision, effect=effect, decided_at=str(state.position)
        )
        event = Event(LINKS_CONSOLIDATED.name, tenant, AGENT, rule.at, data, key=key)
        appended = str(runtime.log.append(tenant, [event])[0].position)
    report = Report(
        tenant,
        str(state.position),
        appended,
        dry_run,
        rule.payload(),
        effect,
        round(time.monotonic() - started, 3),
        list(decision.pruned[:PRUNED_SHOWN]),
    )
    log.info("consolidation of %s: %s", tenant, report.as_dict())
    return report


def enqueue_consolidation(runtime: Runtime, tenant: str, job_id: str, dry_run: bool = False) -> str:
    """Queue a consolidation under `job_id`; one already queued, running or done under it is kept."""
    return enqueue_once(
        runtime,
        MAINTENANCE_QUEUE,
        CONSOLIDATE_JOB,
        job_id,
        (tenant, dry_run),
        CONSOLIDATE_TIMEOUT,
        CONSOLIDATE_RETRIES,
    )
