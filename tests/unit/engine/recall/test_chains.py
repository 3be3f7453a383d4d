from __future__ import annotations

import networkx as nx
import pytest

from assocmem.engine.recall.chains import DAMPING, pagerank


def weighted(edges: list[tuple[int, int, float]], nodes: tuple[int, ...] = ()) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from(edges, weight="strength")
    return graph


def reference(graph: nx.Graph, seeds: list[int]) -> dict[int, float]:
    return nx.pagerank(  # type: ignore[no-any-return]
        graph,
        alpha=DAMPING,
        personalization={s: 1.0 for s in seeds},
        weight="strength",
        tol=1e-13,
        max_iter=1000,
    )


@pytest.mark.parametrize(
    ("edges", "nodes", "seeds"),
    [
        ([(1, 2, 3.0), (2, 3, 1.0), (3, 4, 0.5), (1, 5, 2.0)], (), [1]),
        ([(1, 2, 3.0), (2, 3, 1.0), (3, 4, 0.5), (4, 1, 0.2), (2, 4, 4.0)], (), [1, 3]),
        ([(1, 2, 1.0), (2, 3, 2.0)], (9,), [1, 9]),  # seed 9 has no link at all
        ([(1, 2, 1.0), (3, 4, 1.0)], (), [1]),  # a part the seeds cannot reach gets nothing
    ],
)
def test_personalised_pagerank_is_networkx_pagerank(edges, nodes, seeds) -> None:
    graph = weighted(edges, nodes)
    ours, theirs = pagerank(graph, seeds), reference(graph, seeds)
    assert ours.keys() == theirs.keys()
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_pagerank_of_a_graph_without_links_is_empty() -> None:
    assert pagerank(weighted([], (1, 2)), [1]) == {}
