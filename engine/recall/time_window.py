"""The time window of a request: explicit bounds, a time expression, or one found in the
question's text; for a listing, a day, bounds, an expression or the last seven days."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from assocmem.engine.errors import InvalidQuery, quoted
from assocmem.engine.recall.question import Question, parse_question
from assocmem.engine.recall.recall import TimeRange
from assocmem.engine.text.timeexpr import TimeMatch, parse_time


@dataclasses.dataclass(frozen=True, slots=True)
class Window:
    range: TimeRange | None
    match: TimeMatch | None = None
    applied: bool = False
    question: Question | None = None
    """The question the text asks (its content concepts), when there is text."""


def read_window(
    text: str | None,
    expression: str | None,
    start: float | None,
    end: float | None,
    auto_time: bool,
    now: datetime,
) -> Window:
    explicit = start is not None or end is not None
    question = (
        parse_question(text, now, auto_time and not explicit and not expression)
        if text and text.strip()
        else None
    )
    if explicit:
        return Window(_bounds(start, end), question=question)
    if expression:
        match = _parse(expression, now)
        time_range = TimeRange(match.start.timestamp(), match.end.timestamp())
        return Window(time_range, match, True, question)
    if question is not None and question.time is not None:
        applied = question.is_time_applied
        return Window(question.time_range if applied else None, question.time, applied, question)
    return Window(None, question=question)


def listing_window(
    day: str | None, start: float | None, end: float | None, expression: str | None, now: datetime
) -> TimeRange:
    """The range of an activity listing: a day, bounds, an expression, or the last 7 days."""
    if day is not None:
        try:
            first = datetime.fromisoformat(day).replace(tzinfo=now.tzinfo)
        except ValueError as exc:
            raise InvalidQuery(f"date {quoted(day)} is not a date: expected YYYY-MM-DD") from exc
        first = first.replace(hour=0, minute=0, second=0, microsecond=0)
        return TimeRange(first.timestamp(), (first + timedelta(days=1)).timestamp())
    if expression:
        match = _parse(expression, now)
        return TimeRange(match.start.timestamp(), match.end.timestamp())
    if start is not None or end is not None:
        return _bounds(start, end)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return TimeRange((midnight - timedelta(days=7)).timestamp(), midnight.timestamp())


def _parse(expression: str, now: datetime) -> TimeMatch:
    match = parse_time(expression, now)
    if match is None:
        raise InvalidQuery(
            f"time {quoted(expression)} is not a time expression: expected e.g. 'yesterday', "
            "'last week', 'since March', '上周', '最近三天'"
        )
    return match


def _bounds(start: float | None, end: float | None) -> TimeRange:
    if start is None or end is None:
        raise InvalidQuery("start and end go together: expected both, in unix seconds")
    if end <= start:
        raise InvalidQuery(f"end {end} is not after start {start}: expected start < end")
    return TimeRange(start, end)
