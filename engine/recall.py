"""Reads: query concepts -> direct hits -> one step along links -> ranked items.

Every item says how it was found: `source` is "direct" (it carries a query
concept) or "association" (reached only through expanded concepts), and `via`
lists the links that brought it, with their weights.
"""

from __future__ import annotations

import dataclasses
import heapq

from .errors import InvalidQuery
from .position import parse_position
from .state import Link, Memory, State

DEFAULT_FLOOR = 2.0
"""Weight a written (co-occurrence) link needs before a read follows it."""
DEFAULT_LIMIT = 10
"""Items in one read."""
MAX_LIMIT = 1000
MAX_EXPANSION = 16
"""Expanded concepts a read follows, strongest links first."""


@dataclasses.dataclass(frozen=True, slots=True)
class Query:
    concepts: tuple[str, ...]
    floor: float = DEFAULT_FLOOR
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if not self.concepts:
            raise InvalidQuery(
                "concepts is empty: expected at least one concept (or text to extract them from)"
            )
        if not 0 <= self.floor <= 1e9:
            raise InvalidQuery(f"floor {self.floor} is out of range: expected 0 or more")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidQuery(f"limit {self.limit} is out of range: expected 1 to {MAX_LIMIT}")


@dataclasses.dataclass(frozen=True, slots=True)
class Via:
    concept: str
    source: str
    """The query concept the link starts from."""
    weight: float
    count: int
    learned: float


@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    memory: Memory
    source: str
    score: float
    via: tuple[Via, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Recall:
    position: str
    query_concepts: tuple[str, ...]
    expanded_concepts: dict[str, float]
    items: tuple[Item, ...]


def is_followed(link: Link, floor: float) -> bool:
    return follows(link.count, link.learned, floor)


def follows(count: int, learned: float, floor: float) -> bool:
    """A written link needs the floor; a taught link (positive learned delta) is always followed."""
    weight = count + learned
    return weight >= floor or (learned > 0 and weight > 0)


def recall(state: State, query: Query) -> Recall:
    known = [state.concept_index[c] for c in query.concepts if c in state.concept_index]
    vias = _expand(state, known, query.floor)
    expanded = {concept: max(v.weight for v in links) for concept, links in vias.items()}
    direct = _direct_scores(state, query.concepts)
    association = _association_scores(state, vias, direct, query.floor)
    best = heapq.nsmallest(query.limit, [*direct.items(), *association.items()], key=_rank_key)
    items = tuple(_item(state, mid, score, vias, mid in direct) for mid, score in best)
    ordered = dict(sorted(expanded.items(), key=lambda kv: (-kv[1], kv[0])))
    return Recall(state.position, query.concepts, ordered, items)


def _expand(state: State, known: list[int], floor: float) -> dict[str, list[Via]]:
    """The strongest MAX_EXPANSION concepts one followed link away from the query."""
    query = set(known)
    weights: dict[int, float] = {}
    for q in known:
        counted, learned = state.counts.get(q, {}), state.learned.get(q, {})
        for j in state.neighbours(q):
            count, delta = counted.get(j, 0), learned.get(j, 0.0)
            if j not in query and follows(count, delta, floor):
                weights[j] = max(weights.get(j, 0.0), count + delta)
    strongest = sorted(weights, key=lambda j: (-weights[j], state.concepts[j]))[:MAX_EXPANSION]
    vias: dict[str, list[Via]] = {}
    for j in strongest:
        for q in known:
            link = state.link(q, j)
            if is_followed(link, floor):
                via = Via(
                    state.concepts[j], state.concepts[q], link.weight, link.count, link.learned
                )
                vias.setdefault(via.concept, []).append(via)
    return {c: sorted(v, key=lambda v: (-v.weight, v.source)) for c, v in vias.items()}


def _direct_scores(state: State, concepts: tuple[str, ...]) -> dict[str, float]:
    matched: dict[str, int] = {}
    for concept in concepts:
        for mid in state.memories_with(concept):
            matched[mid] = matched.get(mid, 0) + 1
    share = 1.0 / len(concepts)
    return {mid: _score(state.memories[mid], hits * share) for mid, hits in matched.items()}


def _association_scores(
    state: State, vias: dict[str, list[Via]], direct: dict[str, float], floor: float
) -> dict[str, float]:
    strength: dict[str, float] = {}
    for concept, links in vias.items():
        total = sum(v.weight for v in links)
        for mid in state.memories_with(concept):
            if mid not in direct:
                strength[mid] = strength.get(mid, 0.0) + total
    damping = max(floor, 1.0)
    return {
        mid: _score(state.memories[mid], 0.5 * s / (s + damping)) for mid, s in strength.items()
    }


def _item(
    state: State, mid: str, score: float, vias: dict[str, list[Via]], is_direct: bool
) -> Item:
    memory = state.memories[mid]
    if is_direct:
        return Item(memory, "direct", score)
    links = [v for c in memory.concepts if c in vias for v in vias[c]]
    ordered = tuple(sorted(links, key=lambda v: (-v.weight, v.concept, v.source)))
    return Item(memory, "association", score, ordered)


def _score(memory: Memory, relevance: float) -> float:
    return round(relevance * (0.6 + 0.1 * memory.importance) * (1.0 + 0.5 * memory.valence), 6)


def _rank_key(scored: tuple[str, float]) -> tuple[float, int, int]:
    """Best score first; among equals, the newest memory first."""
    ms, seq = parse_position(scored[0])
    return (-scored[1], -ms, -seq)
