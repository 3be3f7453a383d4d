"""Erasure: every event of a user, an agent, a session or a namespace (or one memory's write)
taken out of a tenant's history for real, or the whole tenant deleted.

The log and its archive are rewritten without the subject's events (the others keep their
positions, and what is appended meanwhile is kept), their dead letters and idempotency keys
dropped, every snapshot deleted and one folded from zero published in their place, and the
store's files rewritten (Redis's AOF). Caches of the history in every process follow the
tenant's epoch, raised by the rewrite and again once the new snapshot is in place.

The subject is named by the SHA-256 of its id: the job's arguments, kept by RQ, and the
subject.forgotten event hold no more than that.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable

import orjson

from assocmem.engine.snapshot.codec import dump_state
from assocmem.engine.state.state import State
from assocmem.workers.job_progress import Report
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.state.heap import collection_held
from assocmem.workers.state.rebuild import Rebuild, rebuild
from assocmem.workers.store.ports import Entry

log = logging.getLogger(__name__)

KINDS = ("user", "agent", "session", "namespace", "tenant")
MEMORY = "memory"
"""The kind of a subject that is one memory (`DELETE /v1/memories/{id}?erase=true`): its
write is taken out of the log."""
PUBLISH_ATTEMPTS = 5
"""A fold job may publish between the drop of the snapshots and ours: drop and publish again."""


@dataclasses.dataclass(frozen=True, slots=True)
class Subject:
    kind: str
    digest: str
    """SHA-256 (hex) of the id: a user's, an agent's, a session's, a namespace's, the
    tenant's; for memories, their ids, comma-separated (log positions, which say nothing of
    anybody)."""


def subject_of(kind: str, value: str) -> Subject:
    return Subject(kind, digest_of(value))


def digest_of(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class ErasureReport:
    kind: str
    events: int
    """Events taken out of the log and its archive."""
    memories: int
    links: int
    """Written links (pairs of concepts) no longer in the state."""
    learned_weight: float
    """Taught link weight (sum of the deltas' magnitudes) no longer in the state."""
    position: str | None
    """Of the snapshot published after the rewrite (None: nothing left)."""
    files_rewritten: bool
    """Redis's AOF was rewritten: no file of the data directory keeps the erased events."""

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def is_subject_of(subject: Subject) -> Callable[[Entry], bool]:
    """Whether a log entry is an event of the subject (an entry that is not an event, a dead
    letter, is nobody's); for a memory, its write."""
    if subject.kind == MEMORY:
        ids = frozenset(subject.digest.split(","))
        return lambda entry: str(entry[0]) in ids

    def matches(entry: Entry) -> bool:
        try:
            envelope = orjson.loads(entry[1])
        except orjson.JSONDecodeError:
            return False
        value = envelope.get(subject.kind) if isinstance(envelope, dict) else None
        return isinstance(value, str) and digest_of(value) == subject.digest

    return matches


def erase(
    runtime: Runtime, tenant: str, subject: Subject, progress: Report | None = None
) -> ErasureReport:
    report = progress or (lambda phase, done: None)
    report("reading the state", 0.0)
    before = rebuild(runtime.log, runtime.snapshots, tenant, Rebuild())
    if subject.kind == "tenant":
        if subject.digest != digest_of(tenant):
            raise ValueError("a tenant erasure names the tenant it runs for")
        events = runtime.log.erase_tenant(tenant)
        runtime.snapshots.drop(tenant)
        after, position = State(), None
    else:
        matches = is_subject_of(subject)
        report("rewriting the log", 0.2)
        removed = runtime.log.rewrite(tenant, lambda entry: not matches(entry))
        runtime.log.forget_positions(tenant, removed)
        events = len(removed)
        report("folding from zero", 0.5)
        after = rebuild(runtime.log, runtime.snapshots, tenant, Rebuild(from_zero=True))
        position = _republish(runtime, tenant, after)
        runtime.log.raise_epoch(tenant)  # caches a racing fold filled before the new snapshot
    report("rewriting the store's files", 0.8)
    runtime.log.compact()
    result = ErasureReport(
        subject.kind,
        events,
        len(before.memories) - len(after.memories),
        before.written_links() - after.written_links(),
        round(_learned(before) - _learned(after), 6),
        position,
        True,
    )
    report("done", 1.0)
    log.info("erasure in %s: %s", tenant, result.as_dict())
    return result


def _republish(runtime: Runtime, tenant: str, state: State) -> str | None:
    """Drop every snapshot (each may hold the subject) and publish `state` in their place."""
    if not state.memories and state.position.ms == 0:
        runtime.snapshots.drop(tenant)
        return None
    with collection_held():
        blob = dump_state(state)
    for _ in range(PUBLISH_ATTEMPTS):
        runtime.snapshots.drop(tenant)
        if runtime.snapshots.publish(tenant, blob, state.position, None):
            return str(state.position)
    raise RuntimeError(f"snapshots of {tenant!r} kept being published during the erasure")


def _learned(state: State) -> float:
    return sum(abs(delta) for row in state.learned.values() for delta in row.values())
