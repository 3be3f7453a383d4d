"""The neighbourhood of concepts in the link graph, for people auditing links."""

from __future__ import annotations

import dataclasses

import numpy as np

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.position import Position
from assocmem.engine.state.link_rule import link_weight, row_links
from assocmem.engine.state.state import State, pair

MAX_SEEDS = 20
MAX_HOPS = 3
DEFAULT_EDGES_PER_CONCEPT = 25
"""Strongest edges kept around each concept reached."""


@dataclasses.dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    weight: float
    count: int
    learned: float
    changed_at: Position
    source_label: str
    target_label: str


def check_graph_request(seeds: list[str], hops: int) -> None:
    if not 1 <= len(seeds) <= MAX_SEEDS:
        raise InvalidQuery(f"concepts has {len(seeds)} items: expected 1 to {MAX_SEEDS}")
    if not 1 <= hops <= MAX_HOPS:
        raise InvalidQuery(f"hops {hops} is out of range: expected 1 to {MAX_HOPS}")


def neighbourhood(
    state: State, seeds: list[str], hops: int, per_concept: int = DEFAULT_EDGES_PER_CONCEPT
) -> list[Edge]:
    """Edges reachable from `seeds` in at most `hops` steps, strongest first per concept."""
    check_graph_request(seeds, hops)
    frontier = [state.concept_index[s] for s in seeds if s in state.concept_index]
    visited = set(frontier)
    edges: dict[tuple[int, int], Edge] = {}
    for _ in range(hops):
        following: list[int] = []
        for i in frontier:
            for j in _strongest(state, i, per_concept):
                link = state.link(i, j)
                edges.setdefault(
                    pair(i, j),
                    Edge(
                        state.concepts[i],
                        state.concepts[j],
                        link.weight,
                        link.count,
                        link.learned,
                        link.changed_at,
                        state.labels[i],
                        state.labels[j],
                    ),
                )
                if j not in visited:
                    visited.add(j)
                    following.append(j)
        frontier = following
    return sorted(edges.values(), key=lambda e: (-e.weight, e.source, e.target))


def _strongest(state: State, i: int, limit: int) -> list[int]:
    """The `limit` neighbours of `i` with the highest weight (count + learned), by name on ties.

    Only the neighbours at or above the `limit`-th weight are sorted in Python: a hub of a
    50,000-note history has thousands, and sorting them all took 0.3 s of a 2-hop graph."""
    targets, counts, learned = row_links(state.counts, state.learned, i)
    strength = link_weight(counts, learned)
    if len(targets) > limit:
        threshold = np.partition(strength, len(strength) - limit)[len(strength) - limit]
        kept = strength >= threshold
        targets, strength = targets[kept], strength[kept]
    ranked = sorted(
        zip(strength.tolist(), targets.tolist(), strict=True),
        key=lambda sj: (-sj[0], state.concepts[sj[1]]),
    )
    return [j for _, j in ranked[:limit]]
