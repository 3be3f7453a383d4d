"""What each request does: validate, extract concepts, append events, or read a state."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

from assocmem.engine.activity import ActivityFilter, activities, summarise
from assocmem.engine.chains import find_chains
from assocmem.engine.documents import unit_concepts
from assocmem.engine.errors import InvalidEvent, InvalidQuery
from assocmem.engine.event import (
    ACTIVITY_LOGGED,
    DOCUMENT_INGESTED,
    FEEDBACK_GIVEN,
    IMPORTANCE_SET,
    MEMORY_WRITTEN,
    Event,
)
from assocmem.engine.extraction import EXTRACTOR_VERSION, Extraction, extract, given_concepts
from assocmem.engine.graph import neighbourhood
from assocmem.engine.links import links_of
from assocmem.engine.payload import check_text, validate_payload
from assocmem.engine.position import is_valid_position, parse_position
from assocmem.engine.prompt import MAX_BUDGET, MIN_BUDGET, prompt_text
from assocmem.engine.question import parse_question
from assocmem.engine.recall import Query, recall
from assocmem.engine.state import State
from assocmem.workers.errors import PositionAhead
from assocmem.workers.event_log import Appended
from assocmem.workers.live_state import LiveState
from assocmem.workers.replay import Rebuild, rebuild
from assocmem.workers.runtime import Runtime

from . import views
from .access import AccessRecorder
from .errors import BadRequest
from .schemas import (
    ActivityIn,
    ChainIn,
    DocumentIn,
    FeedbackIn,
    ImportanceIn,
    MemoryIn,
    ReadIn,
)
from .timing import listing_window, read_window, zone_of

MAX_BATCH = 1000
"""Memories in one batch write."""
UNITS_PER_EVENT = 2000
"""A long document is appended as several document.ingested events of this many units."""
AGENT = "local"
"""The agent every event is attributed to until credentials arrive (a later issue)."""

T = TypeVar("T")


class MemoryService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.tenant = runtime.settings.tenant
        self.zone = zone_of(runtime.settings.timezone)
        self.live = LiveState(runtime.log, runtime.snapshots, self.tenant)
        self.accesses = AccessRecorder(self._append, self.tenant, AGENT)

    # --- writes ------------------------------------------------------------------------------

    def write(self, items: list[MemoryIn]) -> list[dict[str, Any]]:
        if not 1 <= len(items) <= MAX_BATCH:
            raise BadRequest(f"items has {len(items)} entries: expected 1 to {MAX_BATCH}")
        superseded = [i for item in items for i in item.supersedes or []]
        if superseded:
            self._check_known(superseded, "supersedes")
        events = [
            self._memory_event(item, i if len(items) > 1 else None) for i, item in enumerate(items)
        ]
        return self._append_all(events)

    def log_activity(self, body: ActivityIn) -> dict[str, Any]:
        extraction = _extraction(body.text, None, "")
        data = {
            "text": body.text,
            "concepts": list(extraction.concepts),
            "tiers": extraction.tiers,
            "importance": body.importance,
            "category": body.category,
            "tags": body.tags,
            "source": body.source,
            "extractor": EXTRACTOR_VERSION,
        }
        _validate(ACTIVITY_LOGGED, data)
        event = Event(ACTIVITY_LOGGED, self.tenant, AGENT, _ts(body.ts, ""), data, key=body.key)
        return self._append_all([event])[0]

    def ingest(self, body: DocumentIn) -> dict[str, Any]:
        try:
            check_text(body.text)
        except InvalidEvent as exc:
            raise BadRequest(str(exc)) from exc
        units = unit_concepts(body.text, body.scope)
        if not units:
            raise BadRequest(
                "text has no unit with two or more concepts: expected sentences with content words"
            )
        events = []
        for n in range(0, len(units), UNITS_PER_EVENT):
            data = {
                "title": body.title,
                "source": body.source,
                "scope": body.scope,
                "units": units[n : n + UNITS_PER_EVENT],
                "extractor": EXTRACTOR_VERSION,
            }
            _validate(DOCUMENT_INGESTED, data)
            key = f"{body.key}:{n}" if body.key else None
            events.append(Event(DOCUMENT_INGESTED, self.tenant, AGENT, time.time(), data, key=key))
        appended = self._append(events)
        return {
            "positions": [a.position for a in appended],
            "units": len(units),
            "links_from_units": sum(len(u) for u in units),
            "duplicate": all(a.is_duplicate for a in appended),
        }

    def feedback(self, body: FeedbackIn) -> dict[str, Any]:
        concepts = _query_concepts(body.concepts, body.text)
        data = {"memory_ids": body.ids, "outcome": body.outcome, "concepts": list(concepts)}
        _validate(FEEDBACK_GIVEN, data)
        self._check_known(body.ids, "ids")
        event = Event(FEEDBACK_GIVEN, self.tenant, AGENT, time.time(), data, key=body.key)
        appended = self._append([event])[0]
        return {
            "position": appended.position,
            "duplicate": appended.is_duplicate,
            "concepts": list(concepts),
        }

    def set_importance(self, memory_id: str, body: ImportanceIn) -> dict[str, Any]:
        data = {"memory_id": memory_id, "importance": body.importance}
        _validate(IMPORTANCE_SET, data)
        self._check_known([memory_id], "id")
        event = Event(IMPORTANCE_SET, self.tenant, AGENT, time.time(), data)
        appended = self._append([event])[0]
        return {"position": appended.position, "id": memory_id, "importance": body.importance}

    # --- reads -------------------------------------------------------------------------------

    def read(self, body: ReadIn) -> dict[str, Any]:
        zone = zone_of(body.tz) if body.tz else self.zone
        now = datetime.now(zone) if body.now is None else datetime.fromtimestamp(body.now, zone)
        window = read_window(body.text, body.time, body.start, body.end, body.auto_time, now)
        question = window.question
        concepts = (
            given_concepts(body.concepts)
            if body.concepts
            else question.concepts
            if question is not None
            else ()
        )
        if not concepts and window.range is None:
            raise BadRequest(
                "concepts and text are both empty: expected concepts or text to extract them from"
                if question is None
                else f"text {body.text!r} has no content words: expected words that name a topic"
            )
        if body.token_budget is not None and not MIN_BUDGET <= body.token_budget <= MAX_BUDGET:
            raise BadRequest(
                f"token_budget {body.token_budget} is out of range: expected {MIN_BUDGET} to {MAX_BUDGET}"
            )
        query = _checked(
            lambda: Query(
                concepts,
                depth=body.depth,
                floor=body.floor,
                limit=body.limit,
                now=now.timestamp(),
                time_range=window.range,
                history=body.history,
                kinds=tuple(body.kinds) if body.kinds else ("memory", "activity"),
                time_concepts=question.time_concepts if question is not None else (),
                prefers_recent=question is not None and question.prefers_recent,
            )
        )
        live = body.as_of is None and not body.without_feedback
        if live:
            with self._served(body.after) as state:
                result = recall(state, query)
                response = views.recall_view(result, window)
                prompt = prompt_text(result, body.token_budget) if body.token_budget else None
        else:
            result = recall(self.rebuilt(body.as_of, body.without_feedback), query)
            response = views.recall_view(result, window)
            prompt = prompt_text(result, body.token_budget) if body.token_budget else None
        if prompt is not None:
            response["prompt"] = views.prompt_view(prompt)
        if live and body.record_access and result.items:
            self.accesses.record([item.memory.id for item in result.items])
        return response

    def chain(self, body: ChainIn) -> dict[str, Any]:
        concepts = _query_concepts(body.concepts, body.text)
        if body.floor < 0:
            raise BadRequest(f"floor {body.floor} is out of range: expected 0 or more")
        with self._served(body.after) as state:
            unknown = [c for c in concepts if c not in state.concept_index]
            chains = _checked(lambda: find_chains(state, links_of(state), concepts, body.floor))
            return {
                "position": state.position,
                "concepts": list(concepts),
                "unknown_concepts": unknown,
                "chains": [views.chain_view(c) for c in chains],
            }

    def graph(self, concepts: list[str], depth: int) -> dict[str, Any]:
        seeds = list(given_concepts(concepts))
        with self.live.served() as state:
            edges = _checked(lambda: neighbourhood(state, seeds, depth))
            return {
                "position": state.position,
                "concepts": seeds,
                "depth": depth,
                "edges": [views.edge_view(e) for e in edges],
            }

    def activities(
        self,
        day: str | None,
        start: float | None,
        end: float | None,
        when: str | None,
        category: str | None,
        keyword: str | None,
        source: str | None,
        limit: int,
        tz: str | None,
    ) -> dict[str, Any]:
        zone = zone_of(tz) if tz else self.zone
        window = listing_window(day, start, end, when, datetime.now(zone))
        spec = _checked(
            lambda: ActivityFilter(window.start, window.end, category, keyword, source, limit)
        )
        with self.live.served() as state:
            entries = activities(state, spec)
            return {
                "position": state.position,
                "start": window.start,
                "end": window.end,
                "items": [views.memory_view(m) for m in entries],
            }

    def summary(
        self,
        period: str,
        start: float | None,
        end: float | None,
        when: str | None,
        category: str | None,
        tz: str | None,
    ) -> dict[str, Any]:
        zone = zone_of(tz) if tz else self.zone
        window = listing_window(None, start, end, when, datetime.now(zone))
        spec = _checked(lambda: ActivityFilter(window.start, window.end, category))
        with self.live.served() as state:
            periods = _checked(lambda: summarise(state, spec, period, zone))
            return {
                "position": state.position,
                "period": period,
                "start": window.start,
                "end": window.end,
                "periods": [views.period_view(p) for p in periods],
            }

    def state(self, as_of: str | None, without_feedback: bool) -> dict[str, Any]:
        if as_of is None and not without_feedback:
            with self.live.served() as state:
                return views.state_view(state)
        return views.state_view(self.rebuilt(as_of, without_feedback))

    def rebuilt(self, as_of: str | None, without_feedback: bool) -> State:
        if as_of is not None and not is_valid_position(as_of):
            raise BadRequest(
                f"as_of {as_of!r} is not a stream position: expected '<ms>-<seq>', e.g. 1700000000000-0"
            )
        skip = frozenset({FEEDBACK_GIVEN}) if without_feedback else frozenset()
        return rebuild(self.runtime.log, self.runtime.snapshots, self.tenant, Rebuild(as_of, skip))

    # --- helpers -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _served(self, after: str | None) -> Iterator[State]:
        if after is not None and not is_valid_position(after):
            raise BadRequest(
                f"after {after!r} is not a stream position: expected one a write returned,"
                " e.g. 1700000000000-0"
            )
        try:
            with self.live.served(after) as state:
                yield state
        except PositionAhead as exc:
            raise BadRequest(str(exc)) from exc

    def _append(self, events: list[Event]) -> list[Appended]:
        appended = self.runtime.log.append(self.tenant, events)
        if appended:
            self.live.note_appended(max((a.position for a in appended), key=parse_position))
        return appended

    def _append_all(self, events: list[Event]) -> list[dict[str, Any]]:
        appended = self._append(events)
        return [
            {
                "position": a.position,
                "id": a.position,
                "concepts": e.data["concepts"],
                "tiers": e.data.get("tiers"),
                "duplicate": a.is_duplicate,
            }
            for a, e in zip(appended, events, strict=True)
        ]

    def _check_known(self, ids: list[str], field: str) -> None:
        with self.live.served() as state:
            known = state.memories
            unknown = [i for i in ids if i not in known]
        if unknown:
            raise BadRequest(
                f"{field} {unknown} are unknown: expected ids of written memories", 404
            )

    def _memory_event(self, item: MemoryIn, index: int | None) -> Event:
        where = "" if index is None else f"items[{index}]."
        extraction = _extraction(item.text, item.concepts, where)
        data: dict[str, Any] = {
            "text": item.text,
            "concepts": list(extraction.concepts),
            "tiers": extraction.tiers,
            "importance": item.importance,
            "extractor": EXTRACTOR_VERSION,
        }
        if item.supersedes:
            data["supersedes"] = item.supersedes
        _validate(MEMORY_WRITTEN, data, where)
        return Event(MEMORY_WRITTEN, self.tenant, AGENT, _ts(item.ts, where), data, key=item.key)


def _extraction(text: str, concepts: list[str] | None, where: str) -> Extraction:
    try:
        check_text(text, f"{where}text")
    except InvalidEvent as exc:
        raise BadRequest(str(exc)) from exc
    if concepts is not None:
        given = given_concepts(concepts)
        return Extraction(given, len(given), len(given))
    return extract(text)


def _ts(ts: float | None, where: str) -> float:
    if ts is None:
        return time.time()
    if ts < 0:
        raise BadRequest(f"{where}ts {ts} is negative: expected unix seconds")
    return ts


def _query_concepts(concepts: list[str] | None, text: str | None) -> tuple[str, ...]:
    """Named concepts, or the content concepts of a question's text (question words out)."""
    if concepts:
        return given_concepts(concepts)
    if text and text.strip():
        found = parse_question(text, datetime.now(UTC)).concepts
        if found:
            return found
        raise BadRequest(f"text {text!r} has no content words: expected words that name a topic")
    raise BadRequest(
        "concepts and text are both empty: expected concepts or text to extract them from"
    )


def _checked(build: Callable[[], T]) -> T:
    try:
        return build()
    except InvalidQuery as exc:
        raise BadRequest(str(exc)) from exc


def _validate(event_type: str, data: dict[str, Any], where: str = "") -> None:
    try:
        validate_payload(event_type, data)
    except InvalidEvent as exc:
        raise BadRequest(f"{where}{exc}") from exc
