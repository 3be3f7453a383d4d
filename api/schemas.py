"""Request bodies of the HTTP API (responses are plain JSON built in `views`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from assocmem.engine.recall import DEFAULT_FLOOR, DEFAULT_LIMIT


class MemoryIn(BaseModel):
    text: str = Field(
        description="The memory's text (1 to 100,000 characters).",
        examples=["retry with backoff after a timeout"],
    )
    concepts: list[str] | None = Field(
        None,
        description="Concepts to file it under; extracted from the text when absent.",
        examples=[["timeout", "backoff"]],
    )
    importance: int = Field(3, description="1 (trivial) to 5 (vital).")
    ts: float | None = Field(None, description="Event time, unix seconds; now when absent.")
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
        None, description="Query text; its concepts are extracted. Ignored when concepts are given."
    )
    concepts: list[str] | None = Field(None, description="Query concepts.", examples=[["timeout"]])
    floor: float = Field(
        DEFAULT_FLOOR, description="Weight a written link needs before the read follows it."
    )
    limit: int = Field(DEFAULT_LIMIT, description="Items returned, 1 to 1000.")
    as_of: str | None = Field(None, description="Read the state folded up to this stream position.")
    without_feedback: bool = Field(
        False, description="Read a state folded with every feedback event left out."
    )


class FeedbackIn(BaseModel):
    ids: list[str] = Field(description="Ids of the memories the answer relied on (1 to 100).")
    outcome: float = Field(description="-1.0 (harmful) to 1.0 (fully helpful).")
    concepts: list[str] | None = Field(
        None, description="The query's concepts.", examples=[["timeout"]]
    )
    text: str | None = Field(None, description="The query's text, when concepts are not given.")
    key: str | None = Field(None, max_length=200, description="Idempotency key.")
