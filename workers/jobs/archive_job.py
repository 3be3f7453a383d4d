"""The archive job: move the log's entries older than the retention window into archive
segments (workers/store/archive.py), and only then take them off the stream.

Only what the latest snapshot already holds is archived, and never the log's last entry,
so serving and folding never need the archive; replays, `as_of` reads and audits read it
as the head of the log. Run nightly by the cron after the consolidation, or on demand
(`assocmem archive --now`); the job's metadata holds its progress.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from assocmem.engine.position import MAX_PART, Position, just_before
from assocmem.workers.job_progress import Report, job_progress
from assocmem.workers.jobs.job_list import enqueue_once
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE

log = logging.getLogger(__name__)

ARCHIVE_JOB = "assocmem.workers.jobs.archive_job.archive_tenant"
SEGMENT_ENTRIES = 10_000
"""Entries per segment: about a megabyte of commit messages before compression."""
ARCHIVE_TIMEOUT = 3600


@dataclasses.dataclass(frozen=True, slots=True)
class ArchiveReport:
    tenant: str
    upto: str | None
    """The last position archived by this run (None: nothing was old enough)."""
    segments: int
    entries: int
    stored_bytes: int
    raw_bytes: int
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def archive_tenant(tenant: str) -> dict[str, object]:
    """RQ entry point."""
    return archive(current_runtime(), tenant, job_progress()).as_dict()


def archive(
    runtime: Runtime,
    tenant: str,
    progress: Report | None = None,
    clock: Callable[[], float] = time.time,
) -> ArchiveReport:
    started = time.monotonic()
    say = progress or (lambda phase, done: None)
    upto = archivable_upto(runtime, tenant, clock())
    segments, entries, stored, raw = 0, 0, 0, 0
    last: Position | None = None
    if upto is not None:
        first = runtime.log.entries(tenant, Position(0, 0), upto, 1)
        start = first[0][0].ms if first else upto.ms
        while (segment := runtime.log.archive(tenant, upto, SEGMENT_ENTRIES)) is not None:
            segments, entries = segments + 1, entries + segment.count
            stored, raw, last = stored + segment.size, raw + segment.raw_size, segment.last
            say("archiving", (segment.last.ms - start) / max(1, upto.ms - start))
    say("archiving", 1.0)
    report = ArchiveReport(
        tenant,
        str(last) if last else None,
        segments,
        entries,
        stored,
        raw,
        round(time.monotonic() - started, 3),
    )
    log.info("archive of %s: %s", tenant, report.as_dict())
    return report


def archivable_upto(runtime: Runtime, tenant: str, now: float) -> Position | None:
    """The newest position that may be archived: older than the retention window, held by
    the latest snapshot, and not the log's last entry."""
    cutoff = Position(int((now - runtime.settings.retention_days * 86_400) * 1000), MAX_PART)
    snapshot = runtime.snapshots.latest_position(tenant)
    last = runtime.log.last_position(tenant)
    if snapshot is None or last is None:
        return None
    upto = min(cutoff, snapshot)
    if upto >= last:
        upto = just_before(last)
    return upto if upto.ms > 0 else None


def enqueue_archive(runtime: Runtime, tenant: str, job_id: str) -> str:
    """Queue an archive run under `job_id`; one already queued, running or done under it is kept."""
    return enqueue_once(runtime, MAINTENANCE_QUEUE, ARCHIVE_JOB, job_id, (tenant,), ARCHIVE_TIMEOUT)
