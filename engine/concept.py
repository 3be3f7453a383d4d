"""Concept names: the one normal form every concept is stored and queried in."""

from __future__ import annotations

import unicodedata

MAX_CONCEPT_LENGTH = 100
"""Characters in one concept, after normalisation."""


def normalise_concept(raw: str) -> str:
    """NFKC, case-folded, inner white space collapsed to one space."""
    return " ".join(unicodedata.normalize("NFKC", raw).casefold().split())


def normalise_concepts(raw: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Normalise, drop empties and repeats, keep first-seen order."""
    seen: dict[str, None] = {}
    for item in raw:
        concept = normalise_concept(item)
        if concept:
            seen.setdefault(concept, None)
    return tuple(seen)


def without_whitespace(text: str) -> bool:
    """Whether `text` is one word: no white space in it or at either end."""
    return text.split() == [text]
