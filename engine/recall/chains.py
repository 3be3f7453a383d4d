"""Multi-hop reach: personalised PageRank from the query concepts, and chains between concepts.

Both run on a small local graph (the strongest links around the seeds, two
steps out), never on the whole vocabulary: that is what keeps a deep read in
milliseconds. A chain names every hop with its weights and the memories that
made the link, so a hidden intermediate concept can be audited.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING

import numpy as np

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.recall.links import LinkWeights
from assocmem.engine.state.state import State

if TYPE_CHECKING:  # imported where used: an API starts serving before it loads networkx
    import networkx as nx

BREADTH = 10
"""Strongest links taken from each concept into the local graph."""
HOPS = 2
"""Steps from each seed; a chain between two seeds can have up to 2 * HOPS hops."""
SECOND_HOP_SOURCES = 20
"""Concepts of the first step whose own links are followed (strongest first)."""
DAMPING = 0.85
EVIDENCE = 3
"""Memories quoted per hop, newest first."""
MAX_CHAIN_CONCEPTS = 8


@dataclasses.dataclass(frozen=True, slots=True)
class Hop:
    source: str
    target: str
    strength: float
    count: int
    learned: float
    evidence: tuple[str, ...]
    source_label: str
    target_label: str


@dataclasses.dataclass(frozen=True, slots=True)
class Chain:
    path: tuple[str, ...]
    hops: tuple[Hop, ...]
    labels: tuple[str, ...]
    """The words people read for `path`."""

    @property
    def total(self) -> float:
        """The weakest hop's strength: a chain is as strong as its weakest link."""
        return min((h.strength for h in self.hops), default=0.0)

    @property
    def hidden(self) -> tuple[str, ...]:
        """The intermediate concepts the query never named."""
        return self.path[1:-1]


def local_graph(weights: LinkWeights, seeds: list[int], floor: float) -> nx.Graph:
    import networkx as nx  # see the top

    graph = nx.Graph()
    graph.add_nodes_from(seeds)
    frontier = list(dict.fromkeys(seeds))
    for _ in range(HOPS):
        reached: dict[int, float] = {}
        for i in frontier:
            row = weights.row(i, floor)
            for n in range(min(BREADTH, len(row.targets))):
                j, strength = int(row.targets[n]), float(row.strength[n])
                if graph.has_edge(i, j):
                    edge = graph.edges[i, j]
                    edge["strength"] = max(edge["strength"], strength)
                else:
                    graph.add_edge(
                        i,
                        j,
                        strength=strength,
                        count=int(row.count[n]),
                        learned=float(row.learned[n]),
                    )
                if j not in seeds:
                    reached[j] = max(reached.get(j, 0.0), strength)
        frontier = sorted(reached, key=lambda j: -reached[j])[:SECOND_HOP_SOURCES]
    for _, _, data in graph.edges(data=True):
        data["cost"] = 1.0 / data["strength"]
    return graph


def pagerank(graph: nx.Graph, seeds: list[int]) -> dict[int, float]:
    """Personalised PageRank: where a walker restarting at the seeds spends its time.

    Solved exactly as one dense linear system, (I - d W) r = (1 - d) s: the local graph has
    a few hundred nodes at most, where that is 4 times faster than power iteration on a
    sparse matrix and needs no iteration count. Same definition as networkx's pagerank with
    a personalization: a node without links (a seed nobody linked) restarts at the seeds.
    """
    if graph.number_of_edges() == 0:
        return {}
    nodes = list(graph)
    at = {node: n for n, node in enumerate(nodes)}
    size = len(nodes)
    links = np.zeros((size, size))
    for i, j, strength in graph.edges(data="strength"):
        links[at[i], at[j]] = links[at[j], at[i]] = strength
    out = links.sum(axis=0)
    restart = np.zeros(size)
    restart[[at[s] for s in seeds if s in at]] = 1.0
    restart /= restart.sum()
    dangling = out == 0
    walk = links / np.where(dangling, 1.0, out)  # column j: where a walker at j steps to
    walk[:, dangling] = restart[:, None]
    rank = np.linalg.solve(np.eye(size) - DAMPING * walk, (1 - DAMPING) * restart)
    return {node: float(rank[n]) for n, node in enumerate(nodes)}


def chains_between(state: State, graph: nx.Graph, seeds: list[int]) -> list[Chain]:
    """The cheapest path (cost = 1 / strength per hop) between each pair of seeds."""
    import networkx as nx

    chains = []
    for a, b in itertools.combinations(dict.fromkeys(seeds), 2):
        try:
            path = nx.shortest_path(graph, a, b, weight="cost")
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            continue
        chains.append(chain_along(state, graph, path))
    return sorted(chains, key=lambda c: (-c.total, c.path))


def find_chains(
    state: State, weights: LinkWeights, concepts: tuple[str, ...], floor: float
) -> list[Chain]:
    if not 2 <= len(concepts) <= MAX_CHAIN_CONCEPTS:
        raise InvalidQuery(
            f"concepts has {len(concepts)} items: expected 2 to {MAX_CHAIN_CONCEPTS} to chain"
        )
    seeds = [state.concept_index[c] for c in concepts if c in state.concept_index]
    return chains_between(state, local_graph(weights, seeds, floor), seeds)


def chain_along(state: State, graph: nx.Graph, path: list[int]) -> Chain:
    hops = []
    for i, j in itertools.pairwise(path):
        edge = graph.edges[i, j]
        hops.append(
            Hop(
                state.concepts[i],
                state.concepts[j],
                round(edge["strength"], 6),
                edge["count"],
                edge["learned"],
                _evidence(state, i, j),
                state.labels[i],
                state.labels[j],
            )
        )
    return Chain(
        tuple(state.concepts[n] for n in path), tuple(hops), tuple(state.labels[n] for n in path)
    )


def _evidence(state: State, i: int, j: int) -> tuple[str, ...]:
    return tuple(state.rows[r].id for r in state.together(i, j, EVIDENCE))
