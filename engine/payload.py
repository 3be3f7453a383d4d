"""Validation of event payloads, shared by the API (before append) and the fold."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .concept import MAX_CONCEPT_LENGTH
from .errors import InvalidEvent, UnknownEventType
from .event import FEEDBACK_GIVEN, MEMORY_WRITTEN

MAX_TEXT_LENGTH = 100_000
"""Characters in one memory's text."""
MAX_CONCEPTS = 256
"""Concepts on one memory or one feedback."""
MAX_FEEDBACK_IDS = 100
"""Memories named by one feedback."""


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


def _memory_written(data: dict[str, Any]) -> None:
    check_text(data.get("text"))
    check_concepts(data.get("concepts"))
    check_importance(data.get("importance"))


def _feedback_given(data: dict[str, Any]) -> None:
    check_memory_ids(data.get("memory_ids"))
    check_outcome(data.get("outcome"))
    check_concepts(data.get("concepts"), minimum=1)


_VALIDATORS: dict[str, Callable[[dict[str, Any]], None]] = {
    MEMORY_WRITTEN: _memory_written,
    FEEDBACK_GIVEN: _feedback_given,
}
