"""Request bodies of the HTTP API (responses are plain JSON built in `responses`).

Every body is strict (api/http/fields.py): a value of the wrong type is refused, never
coerced, and a 422 names the field and quotes the start of the value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from assocmem.api.http.fields import (
    MAX_TIME_EXPRESSION,
    MAX_ZONE_LENGTH,
    Concept,
    Importance,
    Key,
    Label,
    PointText,
    PositionText,
    UnixTime,
    ranged_float,
    ranged_int,
    text,
)
from assocmem.engine.events.note_payload import MAX_METADATA, MAX_METADATA_KEY, MAX_METADATA_TEXT
from assocmem.engine.events.payload import (
    MAX_CONCEPTS,
    MAX_FEEDBACK_IDS,
    MAX_SUPERSEDES,
    MAX_TAGS,
    MAX_TEXT_LENGTH,
)
from assocmem.engine.recall.prompt import MAX_BUDGET, MIN_BUDGET
from assocmem.engine.recall.recall import DEFAULT_FLOOR, DEFAULT_LIMIT, MAX_LIMIT
from assocmem.workers.store.redis.keys import TENANT_PATTERN

Depth = Literal["fast", "standard", "deep"]
MAX_READ_TEXT = 10_000
"""Characters in the text of a read, a chain or a feedback: a question, not a document."""
MAX_READ_CONCEPTS = 64
"""Concepts named by a read, a chain or a feedback."""
MAX_BATCH = 1000
NoteText = text(MAX_TEXT_LENGTH, blank=False)  # engine/events/payload.py check_text
QuestionText = text(MAX_READ_TEXT)
TimeExpression = text(MAX_TIME_EXPRESSION)
Zone = text(MAX_ZONE_LENGTH)
Floor = ranged_float(0.0, 1e9)
Limit = ranged_int(1, MAX_LIMIT)
Budget = ranged_int(MIN_BUDGET, MAX_BUDGET)
Outcome = ranged_float(-1.0, 1.0)


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid")


Metadata = Annotated[
    dict[
        Annotated[str, StringConstraints(min_length=1, max_length=MAX_METADATA_KEY)],
        Annotated[str, StringConstraints(max_length=MAX_METADATA_TEXT)] | bool | int | float,
    ],
    Field(max_length=MAX_METADATA),
]


class NoteIn(Strict):
    """A memory's text and how to file it: a write's body, and an update's (a new version)."""

    text: NoteText = Field(
        description="The memory's text (1 to 100,000 characters).",
        examples=["retry with backoff after a timeout"],
    )
    concepts: list[Concept] | None = Field(
        None,
        max_length=MAX_CONCEPTS,
        description="Concepts to file it under; extracted from the text when absent. A name "
        "that extraction reads as one word takes that word's form (Timeouts -> timeout), so "
        "it meets the same word in text.",
        examples=[["timeout", "backoff"]],
    )
    importance: Importance = Field(3, description="1 (trivial) to 5 (vital).")
    ts: UnixTime | None = Field(None, description="Event time, unix seconds; now when absent.")
    metadata: Metadata | None = Field(
        None,
        description="A flat object of strings, numbers and booleans (up to 32 keys), shown"
        " with the memory and filtered on in listings.",
        examples=[{"team": "billing", "ticket": 4521, "resolved": False}],
    )
    expires_at: UnixTime | None = Field(
        None,
        description="Unix seconds after which reads, listings and gets leave it out; the"
        " nightly expiry pass then erases it for real. Must be in the future.",
    )
    key: Key | None = Field(
        None,
        description="Idempotency key: a second write with the same key and body returns the "
        "first position; the same key with another body is refused (409).",
    )


class MemoryIn(NoteIn):
    supersedes: list[PositionText] | None = Field(
        None,
        max_length=MAX_SUPERSEDES,
        description="Ids of memories this one replaces; reads then return only this one.",
    )


class MemoryBatchIn(Strict):
    items: list[MemoryIn] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description="1 to 1000 memories, appended atomically in this order.",
    )


class ReadIn(Strict):
    text: QuestionText | None = Field(
        None,
        description="Query text; its concepts are extracted, and a time expression in it "
        "('yesterday', '上周') becomes a time range when auto_time is on.",
    )
    concepts: list[Concept] | None = Field(
        None, max_length=MAX_READ_CONCEPTS, description="Query concepts.", examples=[["timeout"]]
    )
    depth: Depth = Field(
        "standard",
        description="fast: direct + fuzzy; standard: + one step along links (PPMI); "
        "deep: + multi-hop chains (personalised PageRank, paths between query concepts).",
    )
    floor: Floor = Field(
        DEFAULT_FLOOR, description="Count a written link needs before the read follows it."
    )
    limit: Limit = Field(DEFAULT_LIMIT, description="Items returned, 1 to 1000.")
    auto_time: bool = Field(
        True, description="Apply a time expression found in `text` when its confidence is >= 0.5."
    )
    time: TimeExpression | None = Field(
        None,
        description="A time expression to read within, applied whatever its confidence.",
        examples=["last week", "上个月"],
    )
    start: UnixTime | None = Field(None, description="Range start, unix seconds (with `end`).")
    end: UnixTime | None = Field(None, description="Range end (exclusive), unix seconds.")
    tz: Zone | None = Field(
        None, description="IANA time zone for time expressions; default ASSOCMEM_TZ or UTC."
    )
    history: bool = Field(False, description="Also return memories a newer one superseded.")
    context: bool = Field(
        True,
        description="At standard and deep depth: also bring the memory written just after"
        " (or before) a strong match in its stream, as `context` with `beside`.",
    )
    kinds: list[Literal["memory", "activity"]] | None = Field(
        None, min_length=1, max_length=2, description="Only these kinds of entries (default both)."
    )
    token_budget: Budget | None = Field(
        None, description="Also return the result as prompt text of at most this many tokens."
    )
    now: UnixTime | None = Field(
        None,
        description="Rank as if at this time (unix seconds): reproducible scores for audits; default now.",
    )
    record_access: bool = Field(
        True, description="Count the returned memories as accessed (it raises their rank later)."
    )
    filters: dict[str, Any] | None = Field(
        None,
        description="Conditions every returned memory meets, on its metadata keys and its"
        " fields (agent, kind, user, session, namespace, ts, importance): {key: value} for"
        " equality; {key: {op: value}} with eq, ne, in, nin, gt, gte, lt, lte; one level of"
        " {AND: [...]} or {OR: [...]}.",
        examples=[{"team": "billing", "priority": {"gte": 2}}],
    )
    after: PositionText | None = Field(
        None,
        description="A position a write returned: answer from a state that includes it. "
        "Writes through the same API process are waited for without it.",
    )
    as_of: PointText | None = Field(
        None,
        description="Read the state folded up to this stream position, or up to the last"
        " event at or before this ISO time.",
    )
    without_feedback: bool = Field(
        False, description="Read a state folded with every feedback event left out."
    )


class ChainIn(Strict):
    concepts: list[Concept] | None = Field(
        None,
        max_length=MAX_READ_CONCEPTS,
        description="2 to 8 concepts to connect, in order.",
        examples=[["timeout", "jitter"]],
    )
    text: QuestionText | None = Field(None, description="Text to take the concepts from instead.")
    floor: Floor = Field(DEFAULT_FLOOR, description="Count a written link needs to be followed.")
    after: PositionText | None = Field(
        None,
        description="A position a write returned: answer from a state that includes it. "
        "Writes through the same API process are waited for without it.",
    )


class FeedbackIn(Strict):
    ids: list[PositionText] = Field(
        min_length=1,
        max_length=MAX_FEEDBACK_IDS,
        description="Ids of the memories the answer relied on (1 to 100).",
    )
    outcome: Outcome = Field(description="-1.0 (harmful) to 1.0 (fully helpful).")
    concepts: list[Concept] | None = Field(
        None,
        max_length=MAX_READ_CONCEPTS,
        description="The query's concepts.",
        examples=[["timeout"]],
    )
    text: QuestionText | None = Field(
        None, description="The query's text, when concepts are not given."
    )
    key: Key | None = Field(None, description="Idempotency key.")


class ImportanceIn(Strict):
    importance: Importance = Field(description="1 (trivial) to 5 (vital).")
    key: Key | None = Field(None, description="Idempotency key.")


class ActivityIn(Strict):
    text: NoteText = Field(description="What happened.", examples=["deployed v2.3 to staging"])
    category: Label = Field("general", description="A label to filter and summarise by.")
    tags: list[Label] = Field(
        default_factory=list, max_length=MAX_TAGS, description="Up to 32 free labels."
    )
    source: Label | None = Field(None, description="Who or what logged it (a tool, an agent).")
    importance: Importance = Field(3, description="1 (trivial) to 5 (vital).")
    ts: UnixTime | None = Field(
        None, description="When it happened, unix seconds; now when absent."
    )
    key: Key | None = Field(None, description="Idempotency key.")


class DocumentIn(Strict):
    title: Label = Field(description="The document's name (1 to 100 characters).")
    text: NoteText = Field(description="The text; cut into units whose concepts are linked.")
    scope: Literal["sentence", "window"] = Field(
        "sentence", description="Link concepts within a sentence, or within a 40-word window."
    )
    source: Label | None = Field(None, description="Where it came from (path, URL).")
    key: Key | None = Field(None, description="Idempotency key.")


class ConsolidateIn(Strict):
    dry_run: bool = Field(
        False, description="Decide and report, append nothing: the state stays as it is."
    )


class ForgetIn(Strict):
    """Exactly one subject: every event it carries is erased from the tenant's history."""

    # `str` with a None default: the document says a subject is a string, never null, and
    # that exactly one is named (a JSON schema can say it: one property of these five)
    model_config = ConfigDict(json_schema_extra={"minProperties": 1, "maxProperties": 1})

    user: str = Field(None, min_length=1, max_length=128)  # type: ignore[assignment]
    agent: str = Field(None, min_length=1, max_length=100)  # type: ignore[assignment]
    session: str = Field(None, min_length=1, max_length=128)  # type: ignore[assignment]
    namespace: str = Field(None, min_length=1, max_length=128)  # type: ignore[assignment]
    tenant: str = Field(  # type: ignore[assignment]
        None, pattern=TENANT_PATTERN, description="The whole tenant: its own name."
    )


class ReplayJobIn(Strict):
    until: PointText | None = Field(
        None, description="A stream position or an ISO time; the log's end when absent."
    )


class AuditLinkJobIn(Strict):
    source: Concept
    target: Concept


class MemoryItem(MemoryIn):
    type: Literal["memory"] = Field(description="memory.written")


class ActivityItem(ActivityIn):
    type: Literal["activity"] = Field(description="activity.logged")


class FeedbackItem(FeedbackIn):
    type: Literal["feedback"] = Field(description="feedback.given")


class ImportanceItem(ImportanceIn):
    type: Literal["importance"] = Field(description="memory.importance_set")
    memory_id: PositionText = Field(description="The memory whose importance changes.")


class EventBatchIn(Strict):
    items: list[
        Annotated[
            MemoryItem | ActivityItem | FeedbackItem | ImportanceItem, Field(discriminator="type")
        ]
    ] = Field(
        min_length=1,
        max_length=1000,
        description="1 to 1000 events of any kind, appended atomically and in order.",
    )
