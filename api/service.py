"""What each request does: validate, extract concepts, append events, or read a state."""

from __future__ import annotations

import time
from typing import Any

from assocmem.engine.concept import normalise_concepts
from assocmem.engine.errors import InvalidEvent, InvalidQuery
from assocmem.engine.event import FEEDBACK_GIVEN, MEMORY_WRITTEN, Event
from assocmem.engine.extraction import EXTRACTOR_VERSION, extract_concepts
from assocmem.engine.graph import neighbourhood
from assocmem.engine.payload import check_text, validate_payload
from assocmem.engine.position import is_valid_position
from assocmem.engine.recall import Query, recall
from assocmem.engine.state import State
from assocmem.workers.live_state import LiveState
from assocmem.workers.replay import Rebuild, rebuild
from assocmem.workers.runtime import Runtime

from . import views
from .errors import BadRequest
from .schemas import FeedbackIn, MemoryIn, ReadIn

MAX_BATCH = 1000
"""Memories in one batch write."""
AGENT = "local"
"""The agent every event is attributed to until credentials arrive (a later issue)."""


class MemoryService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.tenant = runtime.settings.tenant
        self.live = LiveState(runtime.log, runtime.snapshots, self.tenant)

    def write(self, items: list[MemoryIn]) -> list[dict[str, Any]]:
        if not 1 <= len(items) <= MAX_BATCH:
            raise BadRequest(f"items has {len(items)} entries: expected 1 to {MAX_BATCH}")
        events = [
            self._memory_event(item, i if len(items) > 1 else None) for i, item in enumerate(items)
        ]
        appended = self.runtime.log.append(self.tenant, events)
        return [
            {
                "position": a.position,
                "id": a.position,
                "concepts": e.data["concepts"],
                "duplicate": a.is_duplicate,
            }
            for a, e in zip(appended, events, strict=True)
        ]

    def feedback(self, body: FeedbackIn) -> dict[str, Any]:
        concepts = _query_concepts(body.concepts, body.text)
        data = {"memory_ids": body.ids, "outcome": body.outcome, "concepts": list(concepts)}
        _validate(FEEDBACK_GIVEN, data)
        with self.live.lock:
            known = self.live.current().memories
            unknown = [i for i in body.ids if i not in known]
        if unknown:
            raise BadRequest(f"ids {unknown} are unknown: expected ids of written memories", 404)
        event = Event(FEEDBACK_GIVEN, self.tenant, AGENT, time.time(), data, key=body.key)
        appended = self.runtime.log.append(self.tenant, [event])[0]
        return {
            "position": appended.position,
            "duplicate": appended.is_duplicate,
            "concepts": list(concepts),
        }

    def read(self, body: ReadIn) -> dict[str, Any]:
        concepts = _query_concepts(body.concepts, body.text)
        query = _query(concepts, body.floor, body.limit)
        if body.as_of is None and not body.without_feedback:
            with self.live.lock:
                return views.recall_view(recall(self.live.current(), query))
        return views.recall_view(recall(self.rebuilt(body.as_of, body.without_feedback), query))

    def graph(self, concepts: list[str], depth: int) -> dict[str, Any]:
        seeds = list(normalise_concepts(concepts))
        with self.live.lock:
            state = self.live.current()
            try:
                edges = neighbourhood(state, seeds, depth)
            except InvalidQuery as exc:
                raise BadRequest(str(exc)) from exc
            return {
                "position": state.position,
                "concepts": seeds,
                "depth": depth,
                "edges": [views.edge_view(e) for e in edges],
            }

    def state(self, as_of: str | None, without_feedback: bool) -> dict[str, Any]:
        if as_of is None and not without_feedback:
            with self.live.lock:
                return views.state_view(self.live.current())
        return views.state_view(self.rebuilt(as_of, without_feedback))

    def rebuilt(self, as_of: str | None, without_feedback: bool) -> State:
        if as_of is not None and not is_valid_position(as_of):
            raise BadRequest(
                f"as_of {as_of!r} is not a stream position: expected '<ms>-<seq>', e.g. 1700000000000-0"
            )
        skip = frozenset({FEEDBACK_GIVEN}) if without_feedback else frozenset()
        return rebuild(self.runtime.log, self.runtime.snapshots, self.tenant, Rebuild(as_of, skip))

    def _memory_event(self, item: MemoryIn, index: int | None) -> Event:
        where = "" if index is None else f"items[{index}]."
        try:
            check_text(item.text, f"{where}text")
        except InvalidEvent as exc:
            raise BadRequest(str(exc)) from exc
        concepts = (
            normalise_concepts(item.concepts)
            if item.concepts is not None
            else extract_concepts(item.text)
        )
        data = {
            "text": item.text,
            "concepts": list(concepts),
            "importance": item.importance,
            "extractor": EXTRACTOR_VERSION,
        }
        _validate(MEMORY_WRITTEN, data, where)
        ts = time.time() if item.ts is None else item.ts
        if ts < 0:
            raise BadRequest(f"{where}ts {ts} is negative: expected unix seconds")
        return Event(MEMORY_WRITTEN, self.tenant, AGENT, ts, data, key=item.key)


def _query_concepts(concepts: list[str] | None, text: str | None) -> tuple[str, ...]:
    if concepts:
        return normalise_concepts(concepts)
    if text and text.strip():
        return extract_concepts(text)
    raise BadRequest(
        "concepts and text are both empty: expected concepts or text to extract them from"
    )


def _query(concepts: tuple[str, ...], floor: float, limit: int) -> Query:
    try:
        return Query(concepts, floor, limit)
    except InvalidQuery as exc:
        raise BadRequest(str(exc)) from exc


def _validate(event_type: str, data: dict[str, Any], where: str = "") -> None:
    try:
        validate_payload(event_type, data)
    except InvalidEvent as exc:
        raise BadRequest(f"{where}{exc}") from exc
