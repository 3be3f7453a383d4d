"""The pipeline's jobs as the application offers them: listed, one followed, a failed one
queued again; and the long work that runs as a job rather than inside a request (a sleep
consolidation, a replay, a link audit), queued under an id the caller then follows. And the archive's manifest."""

from __future__ import annotations

from collections.abc import Callable

from assocmem.engine.principal import ADMIN, READ, Principal
from assocmem.workers.app.history import check_link_names
from assocmem.workers.app.history_jobs import AUDIT_LINK_JOB, REPLAY_JOB, enqueue_history
from assocmem.workers.app.permissions import require
from assocmem.workers.app.request_values import parse_point
from assocmem.workers.jobs.archive_job import enqueue_archive
from assocmem.workers.jobs.consolidation_job import enqueue_consolidation
from assocmem.workers.jobs.expiry_job import enqueue_expiry
from assocmem.workers.jobs.job_list import JobInfo, job_info, list_jobs, requeue, unknown_job
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.store.archive import Segment


class JobCommands:
    def __init__(self, runtime: Runtime, clock: Callable[[], float]) -> None:
        self.runtime = runtime
        self.clock = clock

    def all(self, principal: Principal) -> list[JobInfo]:
        """The tenant's jobs (every tenant's for an operator): queued, running, waiting for a
        retry, failed with their error."""
        require(principal, ADMIN)
        return [job for job in list_jobs(self.runtime) if _is_of(principal, job)]

    def one(self, principal: Principal, job_id: str) -> JobInfo:
        """A job of the tenant: a read key follows the replays and audits it started."""
        require(principal, READ)
        job = job_info(self.runtime, job_id)
        if not _is_of(principal, job):
            raise unknown_job(job_id)
        return job

    def requeue(self, principal: Principal, job_id: str) -> JobInfo:
        require(principal, ADMIN)
        self.one(principal, job_id)
        return requeue(self.runtime, job_id)

    def consolidate(self, principal: Principal, dry_run: bool = False) -> JobInfo:
        """Queue a sleep consolidation of the tenant now."""
        require(principal, ADMIN)
        kind = "dry-run" if dry_run else "now"
        job_id = self._id(f"consolidate-{principal.tenant}-{kind}")
        enqueue_consolidation(self.runtime, principal.tenant, job_id, dry_run)
        return job_info(self.runtime, job_id)

    def archive(self, principal: Principal) -> JobInfo:
        """Queue an archive run of the tenant's old log entries now."""
        require(principal, ADMIN)
        job_id = self._id(f"archive-{principal.tenant}-now")
        enqueue_archive(self.runtime, principal.tenant, job_id)
        return job_info(self.runtime, job_id)

    def expire(self, principal: Principal) -> JobInfo:
        """Queue an expiry pass now: the memories past their `expires_at` erased for real."""
        require(principal, ADMIN)
        job_id = self._id(f"expire-{principal.tenant}-now")
        enqueue_expiry(self.runtime, principal.tenant, job_id)
        return job_info(self.runtime, job_id)

    def replay(self, principal: Principal, until: str | None) -> JobInfo:
        """Queue the replay from zero checked against the served state."""
        require(principal, READ)
        if until is not None:
            parse_point(until, "until")  # refused now, not as a failed job
        job_id = self._id(f"replay-{principal.tenant}")
        enqueue_history(self.runtime, REPLAY_JOB, job_id, principal.tenant, until)
        return job_info(self.runtime, job_id)

    def audit_link(self, principal: Principal, source: str, target: str) -> JobInfo:
        """Queue the audit of the link source -- target."""
        require(principal, READ)
        check_link_names(source, target)
        job_id = self._id(f"audit-{principal.tenant}")
        enqueue_history(self.runtime, AUDIT_LINK_JOB, job_id, principal.tenant, source, target)
        return job_info(self.runtime, job_id)

    def segments(self, principal: Principal) -> list[Segment]:
        """The archive's segments, oldest first."""
        require(principal, ADMIN)
        return self.runtime.log.segments(principal.tenant)

    def _id(self, prefix: str) -> str:
        return f"{prefix}-{int(self.clock() * 1000)}"


def _is_of(principal: Principal, job: JobInfo) -> bool:
    """Every job of ours takes its tenant first."""
    return principal.operator or (bool(job.args) and job.args[0] == principal.tenant)
