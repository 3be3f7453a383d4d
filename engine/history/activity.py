"""The activity log (episodic memory): entries by date or range, filtered, and summaries per period."""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime, timedelta, tzinfo

import numpy as np

from assocmem.engine.concept import normalise_concept
from assocmem.engine.errors import InvalidQuery, quoted
from assocmem.engine.state.memory import Memory
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility

PERIODS = ("day", "week", "month")
MAX_ENTRIES = 1000
TOP_CONCEPTS = 5
HIGHLIGHTS = 3


@dataclasses.dataclass(frozen=True, slots=True)
class ActivityFilter:
    start: float
    end: float
    """Unix seconds, end exclusive."""
    category: str | None = None
    keyword: str | None = None
    """Matches a concept of the entry or a substring of its text (case-insensitive)."""
    source: str | None = None
    limit: int = 100
    visibility: Visibility = Visibility(everything=True)
    """Which entries the listing may show (the request's scopes)."""

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise InvalidQuery("time range is empty: expected start before end")
        if not 1 <= self.limit <= MAX_ENTRIES:
            raise InvalidQuery(f"limit {self.limit} is out of range: expected 1 to {MAX_ENTRIES}")


@dataclasses.dataclass(frozen=True, slots=True)
class PeriodSummary:
    start: datetime
    entries: int
    categories: dict[str, int]
    top_concepts: list[str]
    highlights: list[Memory]
    """The most important entries of the period, newest first among equals."""


def activities(state: State, spec: ActivityFilter) -> list[Memory]:
    """Entries in the range that pass the filters, newest first."""
    found = [m for m in _in_range(state, spec.start, spec.end) if _passes(m, spec)]
    found.sort(key=lambda m: (-m.ts, m.id))
    return found[: spec.limit]


def summarise(state: State, spec: ActivityFilter, period: str, zone: tzinfo) -> list[PeriodSummary]:
    if period not in PERIODS:
        raise InvalidQuery(f"period {quoted(period)} is invalid: expected one of {PERIODS}")
    buckets: dict[datetime, list[Memory]] = {}
    for memory in _in_range(state, spec.start, spec.end):
        if _passes(memory, spec):
            key = period_start(datetime.fromtimestamp(memory.ts, zone), period)
            buckets.setdefault(key, []).append(memory)
    return [_summary(start, entries) for start, entries in sorted(buckets.items())]


def period_start(moment: datetime, period: str) -> datetime:
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return day
    if period == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def _summary(start: datetime, entries: list[Memory]) -> PeriodSummary:
    categories = Counter(str((m.meta or {}).get("category")) for m in entries)
    concepts = Counter(c for m in entries for c in m.concepts[: m.core])
    ranked = sorted(entries, key=lambda m: (-m.importance, -m.ts, m.id))
    return PeriodSummary(
        start=start,
        entries=len(entries),
        categories=dict(sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))),
        top_concepts=[c for c, _ in sorted(concepts.items(), key=lambda kv: (-kv[1], kv[0]))][
            :TOP_CONCEPTS
        ],
        highlights=ranked[:HIGHLIGHTS],
    )


def _in_range(state: State, start: float, end: float) -> list[Memory]:
    rows = np.asarray(state.activity_rows, dtype=np.int64)
    if not len(rows):
        return []
    ts = state.ts.values[rows]
    kept = (ts >= start) & (ts < end) & state.present(rows)
    return [state.rows[int(r)] for r in rows[kept]]


def _passes(memory: Memory, spec: ActivityFilter) -> bool:
    if not spec.visibility.sees(memory):
        return False
    meta = memory.meta or {}
    if spec.category is not None and meta.get("category") != spec.category:
        return False
    if spec.source is not None and meta.get("source") != spec.source:
        return False
    if spec.keyword is not None:
        keyword = normalise_concept(spec.keyword)
        if keyword not in memory.concepts and keyword not in normalise_concept(memory.text):
            return False
    return True
