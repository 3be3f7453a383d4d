"""Request bodies of the HTTP API (responses are plain JSON built in `responses`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assocmem.engine.recall import DEFAULT_FLOOR, DEFAULT_LIMIT

Depth = Literal["fast", "standard", "deep"]


class MemoryIn(BaseModel):
    text: str = Field(
        description="The memory's text (1 to 100,000 characters).",
        examples=["retry with backoff after a timeout"],
    )
    concepts: list[str] | None = Field(
        None,
        description="Concepts to file it under; extracted from the text when absent. A name "
        "that extraction reads as one word takes that word's form (Timeouts -> timeout), so "
        "it meets the same word in text.",
        examples=[["timeout", "backoff"]],
    )
    importance: int = Field(3, description="1 (trivial) to 5 (vital).")
    ts: float | None = Field(None, description="Event time, unix seconds; now when absent.")
    supersedes: list[str] | None = Field(
        None, description="Ids of memories this one replaces; reads then return only this one."
    )
    key: str | None = Field(
        None,
        max_length=200,
        description="Idempotency key: a second write with the same key returns the first position.",
    )


class MemoryBatchIn(BaseModel):
    items: list[MemoryIn] = Field(
        description="1 to 1000 memories, appended atomically in this order."
    )


class ReadIn(BaseModel):
    text: str | None = Field(
        None,
        description="Query text; its concepts are extracted, and a time expression in it "
        "('yesterday', '上周') becomes a time range when auto_time is on.",
    )
    concepts: list[str] | None = Field(None, description="Query concepts.", examples=[["timeout"]])
    depth: Depth = Field(
        "standard",
        description="fast: direct + fuzzy; standard: + one step along links (PPMI); "
        "deep: + multi-hop chains (personalised PageRank, paths between query concepts).",
    )
    floor: float = Field(
        DEFAULT_FLOOR, description="Count a written link needs before the read follows it."
    )
    limit: int = Field(DEFAULT_LIMIT, description="Items returned, 1 to 1000.")
    auto_time: bool = Field(
        True, description="Apply a time expression found in `text` when its confidence is >= 0.5."
    )
    time: str | None = Field(
        None,
        description="A time expression to read within, applied whatever its confidence.",
        examples=["last week", "上个月"],
    )
    start: float | None = Field(None, description="Range start, unix seconds (with `end`).")
    end: float | None = Field(None, description="Range end (exclusive), unix seconds.")
    tz: str | None = Field(
        None, description="IANA time zone for time expressions; default ASSOCMEM_TZ or UTC."
    )
    history: bool = Field(False, description="Also return memories a newer one superseded.")
    kinds: list[Literal["memory", "activity"]] | None = Field(
        None, description="Only these kinds of entries (default both)."
    )
    token_budget: int | None = Field(
        None, description="Also return the result as prompt text of at most this many tokens."
    )
    now: float | None = Field(
        None,
        description="Rank as if at this time (unix seconds): reproducible scores for audits; default now.",
    )
    record_access: bool = Field(
        True, description="Count the returned memories as accessed (it raises their rank later)."
    )
    after: str | None = Field(
        None,
        description="A position a write returned: answer from a state that includes it. "
        "Writes through the same API process are waited for without it.",
        examples=["1700000000000-0"],
    )
    as_of: str | None = Field(None, description="Read the state folded up to this stream position.")
    without_feedback: bool = Field(
        False, description="Read a state folded with every feedback event left out."
    )


class ChainIn(BaseModel):
    concepts: list[str] | None = Field(
        None, description="2 to 8 concepts to connect, in order.", examples=[["timeout", "jitter"]]
    )
    text: str | None = Field(None, description="Text to take the concepts from instead.")
    floor: float = Field(DEFAULT_FLOOR, description="Count a written link needs to be followed.")
    after: str | None = Field(
        None,
        description="A position a write returned: answer from a state that includes it. "
        "Writes through the same API process are waited for without it.",
        examples=["1700000000000-0"],
    )


class FeedbackIn(BaseModel):
    ids: list[str] = Field(description="Ids of the memories the answer relied on (1 to 100).")
    outcome: float = Field(description="-1.0 (harmful) to 1.0 (fully helpful).")
    concepts: list[str] | None = Field(
        None, description="The query's concepts.", examples=[["timeout"]]
    )
    text: str | None = Field(None, description="The query's text, when concepts are not given.")
    key: str | None = Field(None, max_length=200, description="Idempotency key.")


class ImportanceIn(BaseModel):
    importance: int = Field(description="1 (trivial) to 5 (vital).")


class ActivityIn(BaseModel):
    text: str = Field(description="What happened.", examples=["deployed v2.3 to staging"])
    category: str = Field("general", description="A label to filter and summarise by.")
    tags: list[str] = Field(default_factory=list, description="Up to 32 free labels.")
    source: str | None = Field(None, description="Who or what logged it (a tool, an agent).")
    importance: int = Field(3, description="1 (trivial) to 5 (vital).")
    ts: float | None = Field(None, description="When it happened, unix seconds; now when absent.")
    key: str | None = Field(None, max_length=200, description="Idempotency key.")


class DocumentIn(BaseModel):
    title: str = Field(description="The document's name (1 to 100 characters).")
    text: str = Field(description="The text; cut into units whose concepts are linked.")
    scope: Literal["sentence", "window"] = Field(
        "sentence", description="Link concepts within a sentence, or within a 40-word window."
    )
    source: str | None = Field(None, description="Where it came from (path, URL).")
    key: str | None = Field(None, max_length=200, description="Idempotency key.")
