"""The routes of the log's history: link and memory audits, replays, diffs, dead letters."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request

from assocmem.api.http import history_views as views
from assocmem.api.http import response_schemas as out
from assocmem.api.http.fields import MAX_CONCEPT_LENGTH
from assocmem.api.http.principal import Caller
from assocmem.api.http.responses import job_view
from assocmem.api.http.schemas import AuditLinkJobIn, ReplayJobIn
from assocmem.workers.app.history_records import link_audit_record, verification_record


def _application(request: Request) -> Any:
    return request.app.state.application


LISTED = 100
MAX_LISTED = 100_000
"""Items of one kind a diff or the dead letters list by default, and at most: two points far
apart differ in millions of links, and a producer gone wrong leaves as many dead letters."""

Concept = Annotated[str, Query(min_length=1, max_length=MAX_CONCEPT_LENGTH)]
Point = Annotated[
    str, Query(min_length=1, max_length=64, description="A stream position or an ISO time")
]
Moment = Annotated[
    str,
    Query(
        min_length=1,
        max_length=64,
        description="A stream position, an ISO time, or a time expression ('yesterday',"
        " '上周': the end of the time it names, now at the latest)",
    ),
]


def audit_link(
    request: Request, caller: Caller, source: Concept, target: Concept
) -> dict[str, Any]:
    """Every event that changed the link between two concepts: position, time, agent, type,
    written and taught deltas, and the weight after it. A concept no event ever named is a
    404 naming the known concepts nearest to it."""
    return link_audit_record(_application(request).audit_link(caller, source, target))


def audit_link_ppmi(
    request: Request, caller: Caller, source: Concept, target: Concept
) -> dict[str, Any]:
    """The link's PPMI over time: at up to six snapshots kept along the log and in the
    served state (it moves with every event, so it is sampled where whole states are
    kept; each sample loads one)."""
    samples = _application(request).link_ppmi(caller, source, target)
    return {
        "source": source,
        "target": target,
        "samples": [
            {"position": str(s.position), "ts": s.position.ms / 1000, "ppmi": round(s.ppmi, 6)}
            for s in samples
        ],
    }


def audit_memory(request: Request, caller: Caller, memory_id: str) -> dict[str, Any]:
    """A memory's write, accesses, ratings, importance changes and supersession."""
    return views.memory_audit_view(memory_id, _application(request).audit_memory(caller, memory_id))


def replay(request: Request, caller: Caller, until: Point | None = None) -> dict[str, Any]:
    """Fold the log from zero up to `until` (default: its end) and compare the content hash
    with the state served there (the newest snapshot at or before it, plus the tail)."""
    return verification_record(_application(request).verify(caller, until))


def diff(
    request: Request,
    caller: Caller,
    first: Moment,
    second: Moment,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_LISTED,
            description="Of each kind of change, the biggest this many (`totals` counts all)",
        ),
    ] = LISTED,
) -> dict[str, Any]:
    """Links that appeared, vanished or changed weight between two points, written and taught
    apart: of each kind, the biggest changes of weight first, and how many there are."""
    return views.diff_view(_application(request).diff(caller, first, second, limit))


def dead_letters(
    request: Request,
    caller: Caller,
    limit: Annotated[
        int, Query(ge=1, le=MAX_LISTED, description="The oldest this many (`total` counts all)")
    ] = LISTED,
) -> dict[str, Any]:
    """Entries the fold could not apply, oldest first: position, reason, and the entry itself."""
    return views.dead_letters_view(_application(request).history.dead_letters(caller, limit))


def resend_dead_letters(request: Request, caller: Caller) -> dict[str, Any]:
    """Append again the dead letters this code now reads (once each); the others with why."""
    return views.resent_view(_application(request).history.resend(caller))


def replay_job(body: ReplayJobIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Queue the replay as a job (for long logs): follow it at /v1/jobs/{id}, its progress,
    then the same answer as GET /v1/replay."""
    return job_view(_application(request).jobs.replay(caller, body.until))


def audit_link_job(body: AuditLinkJobIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Queue a link audit as a job (for long logs): follow it at /v1/jobs/{id}, its progress,
    then the same answer as GET /v1/audit/link. A concept no event ever named is a 404 at
    once, as there."""
    return job_view(_application(request).start_audit_link(caller, body.source, body.target))


ROUTES = [
    ("/v1/audit/link", audit_link, "GET", 200, out.LinkAuditOut),
    ("/v1/audit/link/ppmi", audit_link_ppmi, "GET", 200, out.LinkPpmiOut),
    ("/v1/audit/memory/{memory_id}", audit_memory, "GET", 200, out.MemoryAuditOut),
    ("/v1/audit/link/jobs", audit_link_job, "POST", 202, out.Job),
    ("/v1/replay", replay, "GET", 200, out.VerificationOut),
    ("/v1/replay/jobs", replay_job, "POST", 202, out.Job),
    ("/v1/diff", diff, "GET", 200, out.DiffOut),
    ("/v1/dead-letters", dead_letters, "GET", 200, out.DeadLettersOut),
    ("/v1/dead-letters/resend", resend_dead_letters, "POST", 202, out.ResentOut),
]
