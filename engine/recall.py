"""Reads: query concepts -> direct hits -> one step along links -> ranked items.

Every item says how it was found: `source` is "direct" (it carries a query
concept) or "association" (reached only through expanded concepts), and `via`
lists the links that brought it, with their weights.
"""

from __future__ import annotations

import dataclasses

from .errors import InvalidQuery
from .position import parse_position
from .state import Link, Memory, State

DEFAULT_FLOOR = 2.0
"""Weight a written (co-occurrence) link needs before a read follows it."""
DEFAULT_LIMIT = 10
"""Items in one read."""
MAX_LIMIT = 1000


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
    """A written link needs the floor; a taught link (positive learned delta) is always followed."""
    return link.weight >= floor or (link.is_taught and link.weight > 0)


def recall(state: State, query: Query) -> Recall:
    known = [state.concept_index[c] for c in query.concepts if c in state.concept_index]
    vias = _expand(state, known, query.floor)
    expanded: dict[str, float] = {}
    for concept, links in vias.items():
        expanded[concept] = max(v.weight for v in links)
    direct = _direct_items(state, query.concepts)
    seen = {item.memory.id for item in direct}
    association = _association_items(state, vias, seen, query.floor)
    items = sorted(direct + association, key=_rank_key)[: query.limit]
    ordered = dict(sorted(expanded.items(), key=lambda kv: (-kv[1], kv[0])))
    return Recall(state.position, query.concepts, ordered, tuple(items))


def _expand(state: State, known: list[int], floor: float) -> dict[str, list[Via]]:
    query = set(known)
    vias: dict[str, list[Via]] = {}
    for q in known:
        for j in state.neighbours(q):
            if j in query:
                continue
            link = state.link(q, j)
            if is_followed(link, floor):
                via = Via(
                    state.concepts[j], state.concepts[q], link.weight, link.count, link.learned
                )
                vias.setdefault(via.concept, []).append(via)
    return vias


def _direct_items(state: State, concepts: tuple[str, ...]) -> list[Item]:
    matched: dict[str, int] = {}
    for concept in concepts:
        for mid in state.memories_with(concept):
            matched[mid] = matched.get(mid, 0) + 1
    items = []
    for mid, hits in matched.items():
        memory = state.memories[mid]
        items.append(Item(memory, "direct", _score(memory, hits / len(concepts))))
    return items


def _association_items(
    state: State, vias: dict[str, list[Via]], seen: set[str], floor: float
) -> list[Item]:
    reached: dict[str, list[Via]] = {}
    for concept, links in vias.items():
        for mid in state.memories_with(concept):
            if mid not in seen:
                reached.setdefault(mid, []).extend(links)
    items = []
    for mid, links in reached.items():
        strength = sum(v.weight for v in links)
        relevance = 0.5 * strength / (strength + max(floor, 1.0))
        ordered = tuple(sorted(links, key=lambda v: (-v.weight, v.concept, v.source)))
        items.append(
            Item(
                state.memories[mid], "association", _score(state.memories[mid], relevance), ordered
            )
        )
    return items


def _score(memory: Memory, relevance: float) -> float:
    return round(relevance * (0.6 + 0.1 * memory.importance) * (1.0 + 0.5 * memory.valence), 6)


def _rank_key(item: Item) -> tuple[float, tuple[int, int]]:
    ms, seq = parse_position(item.memory.id)
    return (-item.score, (-ms, -seq))
