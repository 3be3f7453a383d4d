"""Checks that event payloads share: text, concepts, labels, importance, ids.

Each event type's record (engine/events/) combines them into its payload rule, which
the application applies before an append and the fold applies again to every event."""

from __future__ import annotations

import math
from typing import Any

from assocmem.engine.concept import MAX_CONCEPT_LENGTH, without_whitespace
from assocmem.engine.errors import InvalidEvent, quoted

LAST_TIME = 253_402_300_799.0
"""9999-12-31T23:59:59Z: the last instant a calendar (and Python's datetime) can name."""


def in_time(ts: float) -> bool:
    """Whether `ts` is an event's time: unix seconds a calendar can name (NaN, infinity
    and 1e300 cannot)."""
    return math.isfinite(ts) and 0 <= ts <= LAST_TIME


def check_time(ts: float, field: str = "ts") -> None:
    if not in_time(ts):
        raise InvalidEvent(
            f"{field} {ts} is out of range: expected unix seconds from 0 to {LAST_TIME:.0f}"
        )


MAX_TEXT_LENGTH = 100_000
"""Characters in one memory's text."""
MAX_CONCEPTS = 256
"""Concepts on one memory or one feedback."""
MAX_FEEDBACK_IDS = 100
"""Memories named by one feedback."""
MAX_SUPERSEDES = 100
MAX_TAGS = 32
MAX_LABEL_LENGTH = 100
"""Characters in a category, tag, source or document title."""


def check_text(text: Any, field: str = "text") -> None:
    if not isinstance(text, str) or not text.strip():
        raise InvalidEvent(f"{field} {quoted(text)} is empty: expected non-blank text")
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidEvent(
            f"{field} has {len(text)} characters: expected at most {MAX_TEXT_LENGTH}"
        )


def check_concepts(concepts: Any, field: str = "concepts", minimum: int = 0) -> set[str]:
    """Raise unless `concepts` is a list of distinct normalised concepts; return them as a set."""
    # Whole-list passes in C rather than Python loops: the fold checks every event again
    joined = _joined(concepts) if isinstance(concepts, list) else None
    if joined is None:
        raise InvalidEvent(f"{field} {quoted(concepts)} is not a list of strings")
    if not minimum <= len(concepts) <= MAX_CONCEPTS:
        raise InvalidEvent(
            f"{field} has {len(concepts)} items: expected {minimum} to {MAX_CONCEPTS}"
        )
    distinct = set(concepts)
    if len(distinct) != len(concepts):
        raise InvalidEvent(f"{field} {quoted(concepts)} repeats a concept: expected each once")
    if not concepts or (
        "" not in distinct
        and max(map(len, concepts)) <= MAX_CONCEPT_LENGTH
        and without_whitespace(joined)  # so none to strip
    ):
        return distinct
    for concept in concepts:
        if not 0 < len(concept) <= MAX_CONCEPT_LENGTH or concept != concept.strip():
            raise InvalidEvent(
                f"{field} item {quoted(concept)} is not a normalised concept of 1 to {MAX_CONCEPT_LENGTH} characters"
            )
    return distinct


def _all_text(items: Any) -> bool:
    """Whether every item is a string (joining them is the fastest way to ask)."""
    return _joined(items) is not None


def are_ids(items: list[Any]) -> bool:
    """Whether every item is a non-empty string: two passes in C, where a loop of
    `check_ids` took a second over the million merged memories of one consolidation."""
    return _all_text(items) and all(items)


def _joined(items: Any) -> str | None:
    """The items joined, if every one is a string."""
    try:
        return "".join(items)
    except TypeError:
        return None


def check_importance(importance: Any) -> None:
    if isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 5:
        raise InvalidEvent(
            f"importance {quoted(importance)} is out of range: expected a whole number 1 to 5"
        )


def check_outcome(outcome: Any) -> None:
    if (
        isinstance(outcome, bool)
        or not isinstance(outcome, int | float)
        or not math.isfinite(outcome)
    ):
        raise InvalidEvent(f"outcome {quoted(outcome)} is not a number: expected -1.0 to 1.0")
    if not -1.0 <= outcome <= 1.0:
        raise InvalidEvent(f"outcome {outcome} is out of range: expected -1.0 to 1.0")


def check_label(value: Any, field: str, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not 0 < len(value.strip()) <= MAX_LABEL_LENGTH:
        raise InvalidEvent(
            f"{field} {quoted(value)} is invalid: expected text of 1 to {MAX_LABEL_LENGTH} characters"
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
            f"tiers {quoted(tiers)} is invalid: expected [core, core + important] within the {len(concepts)} concepts"
        )


def check_labels(labels: Any, concepts: set[str]) -> None:
    """`concepts`: those the labels may name."""
    if not isinstance(labels, dict) or not _all_text(labels) or not _all_text(labels.values()):
        raise InvalidEvent(f"labels {quoted(labels)} is not an object of concept -> word")
    if not labels.keys() <= concepts:
        stray = sorted(set(labels) - concepts)
        raise InvalidEvent(
            f"labels names {stray[:3]}, not among the concepts: expected their words"
        )
    lengths = list(map(len, labels.values()))
    if not lengths or (0 < min(lengths) and max(lengths) <= MAX_CONCEPT_LENGTH):
        return
    for word in labels.values():
        if not 0 < len(word) <= MAX_CONCEPT_LENGTH:
            raise InvalidEvent(
                f"labels item {quoted(word)} is invalid: expected 1 to {MAX_CONCEPT_LENGTH} characters"
            )


def check_ids(ids: Any, field: str, most: int) -> None:
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise InvalidEvent(f"{field} {quoted(ids)} is not a list of memory ids")
    if len(ids) > most:
        raise InvalidEvent(f"{field} has {len(ids)} items: expected at most {most}")
