"""The values a request brings, made into what the engine takes: a time zone, a position
or a point in time, a checked payload, the concepts of a note, a request's fingerprint.
Engine complaints about them become InvalidRequest."""

from __future__ import annotations

import hashlib
import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from assocmem.engine.errors import EngineError, InvalidEvent, quoted
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.payload import check_text
from assocmem.engine.position import MAX_PART, Position
from assocmem.engine.text.extraction import Extraction, given_terms, named
from assocmem.workers.app import results
from assocmem.workers.errors import InvalidRequest
from assocmem.workers.store.ports import Appended


def zone_of(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidRequest(
            f"tz {quoted(name)} is unknown: expected an IANA time zone such as Asia/Shanghai"
        ) from exc


def parse_position(text: str, field: str) -> Position:
    try:
        return Position.parse(text)
    except ValueError as exc:
        raise InvalidRequest(
            f"{field} {quoted(text)} is not a stream position: expected one a write returned,"
            " '<ms>-<seq>', e.g. 1700000000000-0"
        ) from exc


def parse_point(text: str, field: str) -> Position:
    """A stream position, or an ISO time standing for the last position at or before it."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        try:
            return Position.parse(text)
        except ValueError:
            raise InvalidRequest(
                f"{field} {quoted(text)} is neither a stream position nor an ISO time:"
                " expected e.g. 1700000000000-0 (as a write returned) or 2026-11-30T12:00:00Z"
                " (UTC unless it says)"
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return Position(max(0, int(moment.timestamp() * 1000)), MAX_PART)


def extractions_of(
    notes: list[tuple[str, list[str] | None, str]],
    extract_many: Callable[[list[str]], list[Extraction]],
) -> list[Extraction]:
    """The concepts of each (text, concepts, where): the given ones named, the others
    extracted together by `extract_many` (across processes for a large batch); a blank
    text is refused, naming where it was."""
    for text, _, where in notes:
        checked(lambda text=text, where=where: check_text(text, f"{where}text"))
    extracted = iter(extract_many([text for text, concepts, _ in notes if concepts is None]))
    return [
        named(given_terms(concepts)) if concepts is not None else next(extracted)
        for _, concepts, _ in notes
    ]


def fingerprint(event_type: str, data: dict[str, Any], ts: float | None) -> str:
    """What a keyed request said: its type, payload and the time it gave (not the clock's)."""
    raw = orjson.dumps([event_type, data, ts], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(raw).hexdigest()[:32]


def written(appended: Appended, event: Event) -> results.Written:
    concepts = tuple(event.data["concepts"])
    labels = event.data.get("labels", {})
    return results.Written(
        appended.position,
        concepts,
        tuple(labels.get(c, c) for c in concepts),
        event.data.get("tiers"),
        appended.is_duplicate,
    )


def checked_payload(where: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The record's payload, its rule's complaint (if any) naming the batch item."""
    try:
        return build()
    except InvalidEvent as exc:
        raise InvalidRequest(f"{where}{exc}") from exc


def checked(run: Callable[[], Any]) -> Any:
    """Engine complaints about a request (a malformed value, a bad range) as InvalidRequest."""
    try:
        return run()
    except EngineError as exc:
        raise InvalidRequest(str(exc)) from exc
