"""The plain values the application's commands and queries take (the HTTP app, the CLI
through the client, jobs and the MCP server all build these)."""

from __future__ import annotations

import dataclasses
from typing import Any

from assocmem.engine.recall.recall import DEFAULT_FLOOR, DEFAULT_LIMIT


@dataclasses.dataclass(frozen=True, slots=True)
class Note:
    text: str
    concepts: list[str] | None = None
    """Concepts to file it under; extracted from the text when None."""
    importance: int = 3
    ts: float | None = None
    """Event time, unix seconds; now when None."""
    supersedes: list[str] | None = None
    key: str | None = None
    """Idempotency key."""
    metadata: dict[str, str | bool | int | float] | None = None
    expires_at: float | None = None
    """Unix seconds after which reads leave it out (and the nightly pass erases it)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ActivityEntry:
    text: str
    category: str = "general"
    tags: list[str] = dataclasses.field(default_factory=list)
    source: str | None = None
    importance: int = 3
    ts: float | None = None
    key: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Document:
    title: str
    text: str
    scope: str = "sentence"
    source: str | None = None
    key: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Rating:
    ids: list[str]
    outcome: float
    concepts: list[str] | None = None
    text: str | None = None
    """The question's text, when its concepts are not given."""
    key: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ReadRequest:
    text: str | None = None
    concepts: list[str] | None = None
    depth: str = "standard"
    floor: float = DEFAULT_FLOOR
    limit: int = DEFAULT_LIMIT
    auto_time: bool = True
    time: str | None = None
    start: float | None = None
    end: float | None = None
    tz: str | None = None
    history: bool = False
    context: bool = True
    kinds: list[str] | None = None
    token_budget: int | None = None
    now: float | None = None
    record_access: bool = True
    after: str | None = None
    as_of: str | None = None
    without_feedback: bool = False
    filters: dict[str, Any] | None = None
    """Conditions on metadata and fields (engine/recall/filters.py), as the body gives them."""


@dataclasses.dataclass(frozen=True, slots=True)
class ChainRequest:
    concepts: list[str] | None = None
    text: str | None = None
    floor: float = DEFAULT_FLOOR
    after: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ActivityQuery:
    date: str | None = None
    start: float | None = None
    end: float | None = None
    when: str | None = None
    category: str | None = None
    keyword: str | None = None
    source: str | None = None
    limit: int = 100
    tz: str | None = None
    period: str = "day"
    """For summaries: day, week or month."""


@dataclasses.dataclass(frozen=True, slots=True)
class ImportanceChange:
    memory_id: str
    importance: int
    key: str | None = None
    """Idempotency key."""


BatchItem = Note | ActivityEntry | Rating | ImportanceChange
"""What a mixed batch (Application.publish) appends."""
