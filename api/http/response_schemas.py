"""The shapes of the API's 2xx responses, for the OpenAPI document (and clients generated
from it). responses.py builds the bodies as plain dicts; these models only describe them,
so a read pays for no validation pass."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Concept(BaseModel):
    concept: str = Field(description="The label: the word agents wrote most often for it.")
    key: str = Field(description="The canonical form matching uses (a stem).")


class ExpandedConcept(Concept):
    strength: float


class ChainConcept(Concept):
    rank: float


class NearMiss(Concept):
    query: str
    similarity: float


class Via(BaseModel):
    concept: str
    key: str
    from_: str = Field(alias="from")
    from_key: str
    weight: float
    count: int
    learned: float
    ppmi: float
    strength: float


class Hop(BaseModel):
    from_: str = Field(alias="from")
    to: str
    from_key: str
    to_key: str
    strength: float
    count: int
    learned: float
    evidence: list[str]


class Chain(BaseModel):
    path: list[str]
    path_keys: list[str]
    hidden: list[str]
    total: float
    hops: list[Hop]


class TimeWindow(BaseModel):
    applied: bool
    start: float | None
    end: float | None
    expression: str | None = None
    confidence: float | None = None
    found_start: str | None = None
    found_end: str | None = None


class Memory(BaseModel):
    id: str
    kind: str
    text: str
    concepts: list[str]
    concept_keys: list[str]
    agent: str
    ts: float
    importance: int
    valence: float
    accesses: int
    superseded_by: str | None = None
    category: str | None = None
    tags: list[str] | None = None
    source: str | None = None
    metadata: dict[str, str | bool | int | float] | None = None


class MemoryOut(Memory):
    position: str = Field(description="The position of the state it was read from")
    user: str | None = None
    session: str | None = None
    namespace: str | None = None


class ScopedMemory(Memory):
    user: str | None = None
    session: str | None = None
    namespace: str | None = None


class MemoriesOut(BaseModel):
    position: str = Field(description="The position of the state it was read from")
    memories: list[ScopedMemory] = Field(description="Newest first")
    cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null after the last page"
    )


class Beside(BaseModel):
    id: str = Field(description="The match it was written beside, in the same stream")
    written: Literal["after", "before"]
    taught: float = Field(
        description="What ratings of it, for questions that match answered, taught the link"
        " from that match to it (0: none; -1 unlearns it)"
    )


class Item(Memory):
    source: str = Field(  # type: ignore[assignment]
        description="How it was found: direct, fuzzy, association, chain, time or context"
    )
    score: float
    matched: list[str]
    matched_keys: list[str]
    via: list[Via]
    chain: Chain | None = None
    beside: Beside | None = Field(
        None, description="Where its score came from its place beside a strong match"
    )


class Prompt(BaseModel):
    text: str
    tokens: int
    budget: int
    layers: dict[str, str]
    left_out: int


class ReadOut(BaseModel):
    position: str
    depth: str
    query_concepts: list[Concept]
    matches: list[NearMiss]
    expanded_concepts: list[ExpandedConcept]
    chain_concepts: list[ChainConcept]
    chains: list[Chain]
    time: TimeWindow | None
    items: list[Item]
    prompt: Prompt | None = None


class WrittenOut(BaseModel):
    position: str
    id: str
    concepts: list[str]
    concept_keys: list[str]
    tiers: list[int] | None
    duplicate: bool


class BatchOut(BaseModel):
    items: list[WrittenOut]


class IngestedOut(BaseModel):
    positions: list[str]
    units: int
    links_from_units: int
    duplicate: bool


class RatedOut(BaseModel):
    position: str
    duplicate: bool
    concepts: list[str]
    concept_keys: list[str]


class ImportanceOut(BaseModel):
    position: str
    id: str
    importance: int


class ChainsOut(BaseModel):
    position: str
    concepts: list[str]
    concept_keys: list[str]
    unknown_concepts: list[str]
    chains: list[Chain]


class Edge(BaseModel):
    source: str
    target: str
    source_key: str
    target_key: str
    weight: float
    count: int
    learned: float
    changed_at: str | None = Field(
        description="The newest memory carrying both, or the rating that taught it; null for"
        " a link documents wrote (`GET /v1/audit/link` lists their events)"
    )


class GraphOut(BaseModel):
    position: str
    concepts: list[str]
    concept_keys: list[str]
    unknown_concepts: list[str]
    hops: int
    edges: list[Edge]


class ActivitiesOut(BaseModel):
    position: str
    start: float
    end: float
    items: list[Memory]


class Period(BaseModel):
    start: str
    entries: int
    categories: dict[str, int]
    top_concepts: list[str]
    highlights: list[Memory]


class SummaryOut(BaseModel):
    position: str
    period: str
    start: float
    end: float
    periods: list[Period]


class StateOut(BaseModel):
    position: str
    hash: str
    memories: int
    concepts: int
    documents: int
    written_links: int
    taught_links: int


class HealthOut(BaseModel):
    status: str
    tenant: str
    log_length: int
    served_position: str | None


class LinkChange(BaseModel):
    position: str
    ts: float
    agent: str
    type: str
    written: int
    taught: float
    count: int
    learned: float
    weight: float


class LinkAuditOut(BaseModel):
    source: str
    target: str
    source_key: str
    target_key: str
    count: int
    learned: float
    weight: float
    written_share: float = Field(description="Share of the weight that was written, not taught")
    changes: list[LinkChange]


class PpmiSample(BaseModel):
    position: str
    ts: float = Field(description="Unix seconds of the position")
    ppmi: float


class LinkPpmiOut(BaseModel):
    source: str
    target: str
    samples: list[PpmiSample] = Field(
        description="PPMI of the written counts at snapshots kept along the log, oldest first,"
        " and in the served state last"
    )


class MemoryEvent(BaseModel):
    position: str
    ts: float
    agent: str
    type: str
    detail: dict[str, Any]


class MemoryAuditOut(BaseModel):
    id: str
    events: list[MemoryEvent]


class VerificationOut(BaseModel):
    position: str
    replayed_hash: str
    served_hash: str
    matches: bool
    difference: str | None


class LinkChangeBetween(BaseModel):
    source: str
    target: str
    source_key: str
    target_key: str
    before: dict[str, float] = Field(description="written and taught at the first point")
    after: dict[str, float]


class DiffTotals(BaseModel):
    appeared: int
    vanished: int
    changed: int


class DiffOut(BaseModel):
    first: str
    second: str
    appeared: list[LinkChangeBetween] = Field(description="Biggest change of weight first")
    vanished: list[LinkChangeBetween]
    changed: list[LinkChangeBetween]
    totals: DiffTotals = Field(description="How many of each kind, listed or not (see limit)")


class DeadLetter(BaseModel):
    position: str
    reason: str
    raw: str | None = Field(
        description="The entry as the log holds it (UTF-8, replaced); one that holds no"
        ' field "e" (not written by assocmem): its fields, as a JSON object'
    )


class DeadLettersOut(BaseModel):
    letters: list[DeadLetter] = Field(description="The oldest first (see limit)")
    total: int = Field(description="All the tenant's dead letters, listed or not")


class ResentOut(BaseModel):
    resent: list[dict[str, str | None]]


class Job(BaseModel):
    id: str
    queue: str
    state: str = Field(
        description="queued, running, scheduled (waiting for a retry), finished or failed"
    )
    function: str
    args: list[Any]
    enqueued_at: str | None
    started_at: str | None
    ended_at: str | None
    error: str | None
    retries_left: int | None
    progress: dict[str, Any] | None = Field(
        None, description="While it runs: {phase, done}, done from 0 to 1"
    )
    result: dict[str, Any] | None = Field(None, description="A finished job's report")
    retry_at: str | None = Field(None, description="When a scheduled job is queued again")


class ImportedOut(BaseModel):
    events: int = Field(description="Lines read")
    appended: int
    duplicates: int = Field(description="Lines imported before, not stored again")
    kept_positions: bool = Field(
        description="The events kept their source's positions (they all came after the log's end)"
    )
    position: str | None = Field(description="The last position written; null if none")


class DeletedOut(BaseModel):
    id: str
    position: str | None = Field(
        description="Of the memory.deleted event appended; null if it was deleted before"
    )
    erasure: Job | None = Field(
        description="With erase=true: the job that takes its write out of the log"
    )


class JobsOut(BaseModel):
    jobs: list[Job]


class ArchiveSegment(BaseModel):
    first: str
    last: str
    count: int
    size: int = Field(description="Bytes stored (compressed)")
    raw_size: int = Field(description="Bytes of the entries as the log held them")
    sha256: str


class ArchiveOut(BaseModel):
    segments: list[ArchiveSegment]
    entries: int
    stored_bytes: int
    raw_bytes: int


class PublishedOut(BaseModel):
    items: list[dict[str, Any]] = Field(
        description="Per item, in order: what its own route answers (position, duplicate,"
        " and id and concepts for a memory or an activity)."
    )
