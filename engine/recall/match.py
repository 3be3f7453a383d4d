"""Query concepts -> concepts of the state: exact, or near misses (typos, prefixes, inflections).

Near misses go through rapidfuzz over the vocabulary, and only for query
concepts the state does not know: a known concept is matched exactly. A Chinese
word the state does not know is first cut into the longest words it does know
(jieba may cut "公司总部" whole in a question and apart in a note), each then a
query concept of its own.
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from rapidfuzz import fuzz, process

from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import extract_concepts

MIN_SIMILARITY = 80.0
"""rapidfuzz ratio (0-100) a near miss needs."""
MIN_FUZZY_LENGTH = 3
"""Shorter query concepts are matched exactly only: 'db' is near too much."""
MAX_NEAR = 3
"""Near misses kept per query concept."""
MAX_PIECE = 8
"""Characters in the longest known word a Chinese query word is cut into."""
_HAN_WORD = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]{3,}")
"""A Chinese word worth cutting: two characters cut into two single ones match nothing."""


@dataclasses.dataclass(frozen=True, slots=True)
class Match:
    query: str
    concept: int
    similarity: float
    """1.0 for an exact match, below for a near miss."""
    name: str
    """The matched concept."""

    @property
    def is_exact(self) -> bool:
        return self.similarity == 1.0


def resolve(state: State, concepts: tuple[str, ...], fuzzy: bool = True) -> list[Match]:
    matches: list[Match] = []
    for query in concepts:
        index = state.concept_index.get(query)
        if index is not None:
            matches.append(Match(query, index, 1.0, query))
            continue
        pieces = known_pieces(state, query) if _HAN_WORD.fullmatch(query) else []
        if pieces:
            matches += [Match(p, state.concept_index[p], 1.0, p) for p in pieces]
        elif fuzzy and len(query) >= MIN_FUZZY_LENGTH:
            matches += near_misses(state, query)
    return matches


def known_pieces(state: State, word: str) -> list[str]:
    """The longest known words of two or more characters that `word` is made of, left to
    right (forward maximum matching against the state's vocabulary)."""
    pieces, at = [], 0
    while at < len(word):
        for end in range(min(len(word), at + MAX_PIECE), at + 1, -1):
            if word[at:end] in state.concept_index:
                pieces.append(word[at:end])
                at = end
                break
        else:
            at += 1
    return list(dict.fromkeys(pieces))


def near_misses(state: State, query: str) -> list[Match]:
    found: dict[int, float] = {}
    for folded in extract_concepts(query, 4):  # "staging" given as a concept: "stage" is known
        if folded in state.concept_index:
            found[state.concept_index[folded]] = 0.95
    for concept in _with_prefix(state, query):
        found[state.concept_index[concept]] = 0.9
    vocabulary = state.concepts
    for _, score, index in process.extract(
        query, vocabulary, scorer=fuzz.ratio, score_cutoff=MIN_SIMILARITY, limit=MAX_NEAR
    ):
        found[index] = max(found.get(index, 0.0), round(score / 100, 4))
    best = sorted(found.items(), key=lambda kv: (-kv[1], vocabulary[kv[0]]))[:MAX_NEAR]
    return [
        Match(query, index, min(similarity, 0.99), vocabulary[index]) for index, similarity in best
    ]


def _with_prefix(state: State, prefix: str) -> list[str]:
    ordered = _sorted_vocabulary(state)
    at = bisect.bisect_left(ordered, prefix)
    found = []
    while at < len(ordered) and ordered[at].startswith(prefix) and len(found) < MAX_NEAR:
        found.append(ordered[at])
        at += 1
    return found


def _sorted_vocabulary(state: State) -> list[str]:
    cached = state.derived.get("sorted_vocabulary")
    if cached is None or len(cached) != len(state.concepts):  # type: ignore[arg-type]
        cached = state.derived["sorted_vocabulary"] = sorted(state.concepts)
    return cached  # type: ignore[return-value]
