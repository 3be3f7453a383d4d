"""Documents cut into units (sentences or word windows) whose concepts feed co-occurrence.

A document links concepts within a unit only, never across the whole text:
a 10,000-word document makes as many links as its sentences, not a quadratic
number.
"""

from __future__ import annotations

import re

from assocmem.engine.errors import InvalidQuery, quoted
from assocmem.engine.text.extraction import extract_terms

SCOPES = ("sentence", "window")
WINDOW_WORDS = 40
"""Words per unit in window scope."""
UNIT_CONCEPTS = 24
_SENTENCES = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n\s*\n|\n(?=\s*[-*•\d])")


def units_of(text: str, scope: str) -> list[str]:
    if scope not in SCOPES:
        raise InvalidQuery(f"scope {quoted(scope)} is invalid: expected one of {SCOPES}")
    if scope == "sentence":
        return [u.strip() for u in _SENTENCES.split(text) if u and u.strip()]
    words = text.split()
    return [" ".join(words[n : n + WINDOW_WORDS]) for n in range(0, len(words), WINDOW_WORDS)]


def unit_terms(text: str, scope: str) -> tuple[list[list[str]], dict[str, str]]:
    """The concepts of each unit that has at least two (a single concept links nothing), and
    the word the document first wrote for each concept, where the two differ."""
    units: list[list[str]] = []
    labels: dict[str, str] = {}
    for unit in units_of(text, scope):
        terms = extract_terms(unit, UNIT_CONCEPTS)
        if len(terms) >= 2:
            units.append(list(terms))
            for concept, word in terms.items():
                if word != concept:
                    labels.setdefault(concept, word)
    return units, labels
