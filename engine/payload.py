"""Validation of event payloads, shared by the API (before append) and the fold."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .concept import MAX_CONCEPT_LENGTH
from .errors import InvalidEvent, UnknownEventType
from .event import (
    ACTIVITY_LOGGED,
    DOCUMENT_INGESTED,
    FEEDBACK_GIVEN,
    IMPORTANCE_SET,
    MEMORY_ACCESSED,
    MEMORY_WRITTEN,
)

MAX_TEXT_LENGTH = 100_000
"""Characters in one memory's text."""
MAX_CONCEPTS = 256
"""Concepts on one memory or one feedback."""
MAX_FEEDBACK_IDS = 100
"""Memories named by one feedback."""
MAX_ACCESS_IDS = 10_000
"""Memories named by one memory.accessed event."""
MAX_SUPERSEDES = 100
MAX_TAGS = 32
MAX_LABEL_LENGTH = 100
"""Characters in a category, tag, source or document title."""
MAX_UNITS = 20_000
"""Sentences or windows in one document.ingested event."""
SCOPES = ("sentence", "window")


def validate_payload(event_type: str, data: dict[str, Any]) -> None:
    validator = _VALIDATORS.get(event_type)
    if validator is None:
        raise UnknownEventType(
            f"event type {event_type!r} is unknown: expected one of {sorted(_VALIDATORS)}"
        )
    validator(data)


def check_text(text: Any, field: str = "text") -> None:
    if not isinstance(text, str) or not text.strip():
        raise InvalidEvent(f"{field} {text!r} is empty: expected non-blank text")
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidEvent(
            f"{field} has {len(text)} characters: expected at most {MAX_TEXT_LENGTH}"
        )


def check_concepts(concepts: Any, field: str = "concepts", minimum: int = 0) -> None:
    if not isinstance(concepts, list) or not all(isinstance(c, str) for c in concepts):
        raise InvalidEvent(f"{field} {concepts!r} is not a list of strings")
    if not minimum <= len(concepts) <= MAX_CONCEPTS:
        raise InvalidEvent(
            f"{field} has {len(concepts)} items: expected {minimum} to {MAX_CONCEPTS}"
        )
    if len(set(concepts)) != len(concepts):
        raise InvalidEvent(f"{field} {concepts!r} repeats a concept: expected each once")
    for concept in concepts:
        if not 0 < len(concept) <= MAX_CONCEPT_LENGTH or concept != concept.strip():
            raise InvalidEvent(
                f"{field} item {concept!r} is not a normalised concept of 1 to {MAX_CONCEPT_LENGTH} characters"
            )


def check_importance(importance: Any) -> None:
    if isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 5:
        raise InvalidEvent(
            f"importance {importance!r} is out of range: expected a whole number 1 to 5"
        )


def check_outcome(outcome: Any) -> None:
    if (
        isinstance(outcome, bool)
        or not isinstance(outcome, int | float)
        or not math.isfinite(outcome)
    ):
        raise InvalidEvent(f"outcome {outcome!r} is not a number: expected -1.0 to 1.0")
    if not -1.0 <= outcome <= 1.0:
        raise InvalidEvent(f"outcome {outcome} is out of range: expected -1.0 to 1.0")


def check_memory_ids(ids: Any) -> None:
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise InvalidEvent(f"ids {ids!r} is not a list of memory ids")
    if not 1 <= len(ids) <= MAX_FEEDBACK_IDS:
        raise InvalidEvent(f"ids has {len(ids)} items: expected 1 to {MAX_FEEDBACK_IDS}")


def check_label(value: Any, field: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not 0 < len(value.strip()) <= MAX_LABEL_LENGTH:
        raise InvalidEvent(
            f"{field} {value!r} is invalid: expected text of 1 to {MAX_LABEL_LENGTH} characters"
        )


def check_tiers(tiers: Any, concepts: list[str]) -> None:
    if tiers is None:
        return
    if (
        not isinstance(tiers, list)
        or len(tiers) != 2
        or not all(isinstance(t, int) and not isinstance(t, bool) for t in tiers)
        or not 0 <= tiers[0] <= tiers[1] <= len(concepts)
    ):
        raise InvalidEvent(
            f"tiers {tiers!r} is invalid: expected [core, core + important] within the {len(concepts)} concepts"
        )


def _memory_written(data: dict[str, Any]) -> None:
    check_text(data.get("text"))
    check_concepts(data.get("concepts"))
    check_tiers(data.get("tiers"), data["concepts"])
    check_importance(data.get("importance"))
    supersedes = data.get("supersedes", [])
    if not isinstance(supersedes, list) or not all(isinstance(i, str) and i for i in supersedes):
        raise InvalidEvent(f"supersedes {supersedes!r} is not a list of memory ids")
    if len(supersedes) > MAX_SUPERSEDES:
        raise InvalidEvent(
            f"supersedes has {len(supersedes)} items: expected at most {MAX_SUPERSEDES}"
        )


def _memory_accessed(data: dict[str, Any]) -> None:
    ids, hits = data.get("memory_ids"), data.get("hits")
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise InvalidEvent(f"memory_ids {ids!r} is not a list of memory ids")
    if not 1 <= len(ids) <= MAX_ACCESS_IDS:
        raise InvalidEvent(f"memory_ids has {len(ids)} items: expected 1 to {MAX_ACCESS_IDS}")
    if (
        not isinstance(hits, list)
        or len(hits) != len(ids)
        or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hits)
    ):
        raise InvalidEvent(f"hits {hits!r} is invalid: expected one count of 1 or more per id")


def _importance_set(data: dict[str, Any]) -> None:
    check_memory_ids([data.get("memory_id")])
    check_importance(data.get("importance"))


def _activity_logged(data: dict[str, Any]) -> None:
    check_text(data.get("text"))
    check_concepts(data.get("concepts"))
    check_tiers(data.get("tiers"), data["concepts"])
    check_importance(data.get("importance"))
    check_label(data.get("category"), "category")
    check_label(data.get("source"), "source", optional=True)
    tags = data.get("tags")
    if not isinstance(tags, list) or len(tags) > MAX_TAGS:
        raise InvalidEvent(f"tags {tags!r} is invalid: expected a list of at most {MAX_TAGS}")
    for tag in tags:
        check_label(tag, "tags item")


def _document_ingested(data: dict[str, Any]) -> None:
    check_label(data.get("title"), "title")
    if data.get("scope") not in SCOPES:
        raise InvalidEvent(f"scope {data.get('scope')!r} is invalid: expected one of {SCOPES}")
    units = data.get("units")
    if not isinstance(units, list) or not 1 <= len(units) <= MAX_UNITS:
        raise InvalidEvent(f"units is invalid: expected a list of 1 to {MAX_UNITS} concept lists")
    for n, unit in enumerate(units):
        check_concepts(unit, f"units[{n}]")


def _feedback_given(data: dict[str, Any]) -> None:
    check_memory_ids(data.get("memory_ids"))
    check_outcome(data.get("outcome"))
    check_concepts(data.get("concepts"), minimum=1)


_VALIDATORS: dict[str, Callable[[dict[str, Any]], None]] = {
    MEMORY_WRITTEN: _memory_written,
    FEEDBACK_GIVEN: _feedback_given,
    MEMORY_ACCESSED: _memory_accessed,
    IMPORTANCE_SET: _importance_set,
    ACTIVITY_LOGGED: _activity_logged,
    DOCUMENT_INGESTED: _document_ingested,
}
