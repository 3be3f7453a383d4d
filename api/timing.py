"""Time ranges of requests: explicit bounds, a time expression, or one found in the query text."""

from __future__ import annotations

import dataclasses
import zoneinfo
from datetime import datetime, timedelta

from assocmem.engine.recall import TimeRange
from assocmem.engine.timeexpr import AUTO_TIME_THRESHOLD, TimeMatch, parse_time

from .errors import BadRequest


def zone_of(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise BadRequest(
            f"tz {name!r} is unknown: expected an IANA time zone such as Asia/Shanghai"
        ) from exc


@dataclasses.dataclass(frozen=True, slots=True)
class Window:
    range: TimeRange | None
    match: TimeMatch | None = None
    applied: bool = False
    text: str | None = None
    """The query text left once an applied expression is cut out."""


def read_window(
    text: str | None,
    expression: str | None,
    start: float | None,
    end: float | None,
    auto_time: bool,
    now: datetime,
) -> Window:
    if start is not None or end is not None:
        return Window(_bounds(start, end), text=text)
    if expression:
        match = _parse(expression, now)
        return Window(TimeRange(match.start.timestamp(), match.end.timestamp()), match, True, text)
    if text and auto_time:
        match = parse_time(text, now)
        if match is not None:
            applied = match.confidence >= AUTO_TIME_THRESHOLD
            time_range = TimeRange(match.start.timestamp(), match.end.timestamp())
            return Window(
                time_range if applied else None,
                match,
                applied,
                match.without(text) if applied else text,
            )
    return Window(None, text=text)


def listing_window(
    day: str | None, start: float | None, end: float | None, expression: str | None, now: datetime
) -> TimeRange:
    """The range of an activity listing: a day, bounds, an expression, or the last 7 days."""
    if day is not None:
        try:
            first = datetime.fromisoformat(day).replace(tzinfo=now.tzinfo)
        except ValueError as exc:
            raise BadRequest(f"date {day!r} is not a date: expected YYYY-MM-DD") from exc
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
        raise BadRequest(
            f"time {expression!r} is not a time expression: expected e.g. 'yesterday', "
            "'last week', 'since March', '上周', '最近三天'"
        )
    return match


def _bounds(start: float | None, end: float | None) -> TimeRange:
    if start is None or end is None:
        raise BadRequest("start and end go together: expected both, in unix seconds")
    if end <= start:
        raise BadRequest(f"end {end} is not after start {start}: expected start < end")
    return TimeRange(start, end)
