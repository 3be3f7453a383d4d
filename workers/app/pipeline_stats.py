"""How far the pipeline is behind, per tenant, read from the stores when asked (a metrics
scrape): the log, its latest snapshot, the dead letters, and the failed jobs."""

from __future__ import annotations

import dataclasses
import time

from assocmem.engine.position import ZERO
from assocmem.workers.jobs.job_list import list_jobs
from assocmem.workers.runtime.services import Runtime

LAG_COUNT_CAP = 10_000
"""Events after the latest snapshot are counted up to this many (a scrape reads them)."""


@dataclasses.dataclass(frozen=True, slots=True)
class TenantStats:
    tenant: str
    log_events: int
    """Entries in the log, archived ones included."""
    lag_events: int
    """Entries after the latest snapshot, up to LAG_COUNT_CAP."""
    lag_seconds: float
    """How long the oldest entry no snapshot holds has waited (0 when there is none)."""
    snapshot_age_seconds: float | None
    """Since the newest entry the latest snapshot holds was appended; None without one."""
    snapshot_bytes: int
    dead_letters: int


def tenant_stats(runtime: Runtime, now: float | None = None) -> list[TenantStats]:
    now = time.time() if now is None else now
    found = []
    for tenant in runtime.log.tenants():
        snapshot = runtime.snapshots.latest_position(tenant)
        after = runtime.log.entries(tenant, snapshot or ZERO, count=LAG_COUNT_CAP)
        found.append(
            TenantStats(
                tenant,
                runtime.log.length(tenant),
                len(after),
                max(0.0, now - after[0][0].ms / 1000) if after else 0.0,
                now - snapshot.ms / 1000 if snapshot else None,
                runtime.snapshots.size(tenant, snapshot) if snapshot else 0,
                runtime.log.dead_letter_count(tenant),
            )
        )
    return found


def failed_jobs(runtime: Runtime) -> dict[str, int]:
    """Failed jobs by queue (their retries spent; `assocmem jobs` shows their errors)."""
    counts: dict[str, int] = {}
    for job in list_jobs(runtime):
        if job.state == "failed":
            counts[job.queue] = counts.get(job.queue, 0) + 1
    return counts
