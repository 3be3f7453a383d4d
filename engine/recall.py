"""Reads: query concepts -> matching stages -> ranked items, each saying how it was found.

Stages, by depth:
- fast: `direct` (the memory carries a query concept) and `fuzzy` (it carries a
  near miss of one: a typo, a prefix, an inflection the stemmer missed);
- standard: + `association` (one followed link from a query concept, ranked by
  PPMI + learned delta);
- deep: + `chain` (concepts personalised PageRank reaches in several steps),
  with the chains between the query concepts.
A time range (given, or parsed from the query text) keeps only memories in the
range and adds the unmatched ones in it as `time` items.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np

from .chains import Chain, chain_along, chains_between, local_graph, pagerank
from .errors import InvalidQuery
from .links import LinkWeights, links_of
from .match import Match, resolve
from .rank import STAGE_BANDS, TIER_WEIGHTS, factors, idf, length_norm, mean_length, top
from .state import CORE, SUPPLEMENT, Memory, State

DEFAULT_FLOOR = 2.0
"""Count a written (co-occurrence) link needs before a read follows it."""
DEFAULT_LIMIT = 10
MAX_LIMIT = 1000
MAX_EXPANSION = 16
"""Expanded concepts a read follows, strongest links first."""
MAX_CHAIN_CONCEPTS = 8
"""Concepts PageRank adds in a deep read."""
DEPTHS = ("fast", "standard", "deep")
KINDS = ("memory", "activity")
ASSOCIATION_BONUS = 0.05
"""Share of its association relevance a directly matched memory gets on top."""
SOURCES = ("direct", "fuzzy", "association", "chain", "time")

__all__ = ["Query", "Recall", "Item", "Via", "recall"]


@dataclasses.dataclass(frozen=True, slots=True)
class TimeRange:
    start: float
    end: float
    """Unix seconds, end exclusive."""


@dataclasses.dataclass(frozen=True, slots=True)
class Query:
    concepts: tuple[str, ...]
    depth: str = "standard"
    floor: float = DEFAULT_FLOOR
    limit: int = DEFAULT_LIMIT
    now: float | None = None
    """For time decay; None = the newest memory's time (keeps the read a pure function)."""
    time_range: TimeRange | None = None
    history: bool = False
    """Also return memories a newer one superseded."""
    kinds: tuple[str, ...] = KINDS

    def __post_init__(self) -> None:
        if not self.concepts and self.time_range is None:
            raise InvalidQuery(
                "concepts is empty: expected at least one concept (or text to extract them from)"
            )
        if self.depth not in DEPTHS:
            raise InvalidQuery(f"depth {self.depth!r} is invalid: expected one of {DEPTHS}")
        if not 0 <= self.floor <= 1e9:
            raise InvalidQuery(f"floor {self.floor} is out of range: expected 0 or more")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidQuery(f"limit {self.limit} is out of range: expected 1 to {MAX_LIMIT}")
        if not self.kinds or set(self.kinds) - set(KINDS):
            raise InvalidQuery(f"kinds {list(self.kinds)} is invalid: expected some of {KINDS}")
        if self.time_range and self.time_range.end <= self.time_range.start:
            raise InvalidQuery("time range is empty: expected start before end")


@dataclasses.dataclass(frozen=True, slots=True)
class Via:
    concept: str
    source: str
    """The query concept the link starts from."""
    weight: float
    """Count + learned delta (what the floor is checked against)."""
    count: int
    learned: float
    strength: float = 0.0
    """PPMI + learned delta (what expansion is ranked by)."""
    ppmi: float = 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    memory: Memory
    source: str
    score: float
    via: tuple[Via, ...] = ()
    matched: tuple[str, ...] = ()
    """For direct and fuzzy items: the memory's concepts that matched."""
    chain: Chain | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Recall:
    position: str
    query_concepts: tuple[str, ...]
    depth: str
    matches: tuple[Match, ...]
    expanded_concepts: dict[str, float]
    items: tuple[Item, ...]
    chains: tuple[Chain, ...] = ()
    chain_concepts: dict[str, float] = dataclasses.field(default_factory=dict)
    time_range: TimeRange | None = None


DIRECT, FUZZY, ASSOCIATION, CHAIN, TIME, COVERAGE = range(6)
"""Rows of _Stages.totals: the stages in the order of SOURCES, then the direct matches'
query coverage."""


class _Stages:
    """Per stage, the (rows, values) each matched or followed concept adds.

    Only the memories some stage touched are scored: a read costs what its postings
    hold, not what the whole state holds (at 50,000 memories, full-size arrays per
    stage were most of a fast read).
    """

    def __init__(self) -> None:
        self.parts: list[tuple[int, np.ndarray, np.ndarray]] = []

    def add(self, stage: int, rows: np.ndarray, values: np.ndarray | float) -> None:
        if len(rows):
            self.parts.append((stage, rows, np.broadcast_to(values, rows.shape)))

    def candidates(self, size: int) -> np.ndarray:
        """Ascending rows some stage touched, of `size` memories."""
        touched = np.zeros(size, dtype=bool)
        for _, rows, _ in self.parts:
            touched[rows] = True
        return np.flatnonzero(touched)

    def totals(self, candidates: np.ndarray, size: int) -> np.ndarray:
        """6 x len(candidates): each stage's summed values per candidate."""
        at = np.empty(size, dtype=np.int64)
        at[candidates] = np.arange(len(candidates))
        totals = np.zeros((COVERAGE + 1, len(candidates)))
        for stage, rows, values in self.parts:
            # A concept's postings hold each row once, so a plain fancy-index add is exact
            # (and many times faster than np.add.at).
            totals[stage, at[rows]] += values
        return totals


def recall(state: State, query: Query) -> Recall:
    n = len(state.rows)
    now = query.now if query.now is not None else float(state.ts.values.max()) if n else 0.0
    matches = resolve(state, query.concepts)
    stages = _Stages()
    _match(state, matches, stages)
    seeds = list(dict.fromkeys(m.concept for m in matches))
    vias: dict[int, list[Via]] = {}
    chains: list[Chain] = []
    reached: dict[int, float] = {}
    paths: dict[int, Chain] = {}
    if query.depth != "fast" and seeds:
        weights = links_of(state)
        vias = _expand(state, weights, seeds, query.floor)
        _spread(
            state,
            {j: max(v.strength for v in vs) for j, vs in vias.items()},
            stages,
            ASSOCIATION,
            1,
        )
        if query.depth == "deep":
            graph = local_graph(weights, seeds, query.floor)
            reached = _pagerank_concepts(graph, seeds, set(vias))
            _spread(state, reached, stages, CHAIN, CORE + 1)
            chains = chains_between(state, graph, seeds)
            paths = _paths(state, graph, seeds, reached)
    if query.time_range is not None:
        stages.add(TIME, _in_range(state, query.time_range), 1.0)
    candidates = stages.candidates(n)
    relevance, source = _combine(stages.totals(candidates, n))
    keep = relevance > 0
    if query.time_range is not None:
        ts = state.ts.values[candidates]
        keep &= (ts >= query.time_range.start) & (ts < query.time_range.end)
    if set(query.kinds) != set(KINDS):
        keep &= _is_activity(state, candidates) == (query.kinds == ("activity",))
    if not query.history:
        keep &= state.alive.values[candidates]
    rows, relevance, source = candidates[keep], relevance[keep], source[keep]
    scores = relevance * factors(state, rows, now)
    best = top(np.arange(len(rows)), scores, query.limit)
    seed_set = set(seeds)
    items = tuple(
        _item(
            state, int(rows[k]), round(score, 6), SOURCES[source[k]], vias, matches, seed_set, paths
        )
        for k, score in best
    )
    return Recall(
        position=state.position,
        query_concepts=query.concepts,
        depth=query.depth,
        matches=tuple(matches),
        expanded_concepts={
            state.concepts[j]: round(max(v.strength for v in vs), 6) for j, vs in vias.items()
        },
        items=items,
        chains=tuple(chains),
        chain_concepts={state.concepts[j]: round(r, 6) for j, r in reached.items()},
        time_range=query.time_range,
    )


def _match(state: State, matches: list[Match], stages: _Stages) -> None:
    """BM25-like relevance of direct and near-miss matches, normalised to 0-1."""
    best_idf: dict[str, float] = {}
    for m in matches:
        best_idf[m.query] = max(best_idf.get(m.query, 0.0), idf(state, m.concept))
    total = sum(best_idf.values()) or 1.0
    average_length = mean_length(state)
    for m in matches:
        rows, tiers = state.postings.of(m.concept)
        weight = idf(state, m.concept) / total
        gain = weight * TIER_WEIGHTS[tiers] * length_norm(state, rows, average_length)
        stages.add(DIRECT if m.is_exact else FUZZY, rows, gain * m.similarity)
        stages.add(COVERAGE, rows, weight)


def _expand(
    state: State, weights: LinkWeights, seeds: list[int], floor: float
) -> dict[int, list[Via]]:
    """The strongest MAX_EXPANSION concepts one followed link away from the seeds."""
    found: dict[int, list[Via]] = {}
    seed_set = set(seeds)
    for seed in seeds:
        row = weights.row(seed, floor)
        for n in range(min(len(row.targets), MAX_EXPANSION + len(seeds))):
            j = int(row.targets[n])
            if j in seed_set:
                continue
            count, learned = int(row.count[n]), float(row.learned[n])
            via = Via(
                concept=state.concepts[j],
                source=state.concepts[seed],
                weight=max(0.0, count + learned),
                count=count,
                learned=learned,
                strength=round(float(row.strength[n]), 6),
                ppmi=round(float(row.ppmi[n]), 6),
            )
            found.setdefault(j, []).append(via)
    strongest = sorted(
        found, key=lambda j: (-max(v.strength for v in found[j]), state.concepts[j])
    )[:MAX_EXPANSION]
    return {j: sorted(found[j], key=lambda v: (-v.strength, v.source)) for j in strongest}


def _spread(
    state: State, weights: dict[int, float], stages: _Stages, stage: int, max_tier: int
) -> None:
    """Each concept's normalised weight to the memories carrying it in a tier below max_tier."""
    if not weights:
        return
    strongest = max(weights.values()) or 1.0
    for j, weight in weights.items():
        rows, tiers = state.postings.of(j)
        usable = tiers <= min(max_tier, SUPPLEMENT - 1)
        stages.add(stage, rows[usable], weight / strongest * TIER_WEIGHTS[tiers[usable]])


def _pagerank_concepts(graph: nx.Graph, seeds: list[int], expanded: set[int]) -> dict[int, float]:
    ranks = pagerank(graph, seeds)
    skip = set(seeds) | expanded
    ordered = sorted((j for j in ranks if j not in skip), key=lambda j: (-ranks[j], j))
    return {j: ranks[j] for j in ordered[:MAX_CHAIN_CONCEPTS]}


def _paths(
    state: State, graph: nx.Graph, seeds: list[int], reached: dict[int, float]
) -> dict[int, Chain]:
    """For each concept PageRank reached, the chain from the nearest seed to it."""
    if not reached:
        return {}
    _, paths = nx.multi_source_dijkstra(graph, set(seeds), weight="cost")
    return {j: chain_along(state, graph, paths[j]) for j in reached if j in paths}


def _combine(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relevance and source index per candidate: the first stage that found it labels it.

    Each stage has a band (rank.STAGE_BANDS): any direct match outranks any association
    before the other factors, however weak the match and strong the link.
    """
    # Coverage counts twice: a memory carrying every query concept beats one carrying the
    # rarest only, whatever their tiers.
    coverage = np.minimum(totals[COVERAGE], 1.0)
    direct = np.minimum(totals[DIRECT] * coverage, 1.0)
    fuzzy = np.minimum(totals[FUZZY] * coverage, 1.0)
    association = np.minimum(totals[ASSOCIATION], 1.0) * STAGE_BANDS["association"][1]
    chain = np.minimum(totals[CHAIN], 1.0) * STAGE_BANDS["chain"][1]
    time = totals[TIME] * STAGE_BANDS["time"][1]
    found = np.stack([direct, fuzzy, association, chain, time]) > 0
    source = np.where(found.any(axis=0), found.argmax(axis=0), TIME)
    by_source = np.stack(
        [
            _band("direct", direct) + ASSOCIATION_BONUS * association,
            _band("fuzzy", fuzzy),
            association,
            chain,
            time,
        ]
    )
    relevance = np.where(found.any(axis=0), by_source[source, np.arange(len(source))], 0.0)
    return relevance, source


def _band(stage: str, value: np.ndarray) -> np.ndarray:
    low, high = STAGE_BANDS[stage]
    return low + (high - low) * value


def _in_range(state: State, time_range: TimeRange) -> np.ndarray:
    ts = state.ts.values
    return np.flatnonzero((ts >= time_range.start) & (ts < time_range.end))


def _is_activity(state: State, rows: np.ndarray) -> np.ndarray:
    """Per row, whether it is an activity entry (from the state's ascending activity rows)."""
    activity = np.asarray(state.activity_rows, dtype=np.int64)
    if not len(activity):
        return np.zeros(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(activity, rows), len(activity) - 1)
    return activity[at] == rows


def _item(
    state: State,
    row: int,
    score: float,
    source: str,
    vias: dict[int, list[Via]],
    matches: list[Match],
    seeds: set[int],
    paths: dict[int, Chain],
) -> Item:
    memory = state.rows[row]
    carried = memory.concepts  # `in` on a tuple scans in C: cheaper than indexing 160 concepts
    if source in ("direct", "fuzzy"):
        names = dict.fromkeys(m.name for m in matches)
        return Item(memory, source, score, matched=tuple(n for n in names if n in carried))
    if source == "association":
        links = [v for j, vs in vias.items() if state.concepts[j] in carried for v in vs]
        ordered = tuple(sorted(links, key=lambda v: (-v.strength, v.concept, v.source)))
        return Item(memory, source, score, ordered)
    if source == "chain":
        reachable = [c for j, c in paths.items() if state.concepts[j] in carried]
        if reachable:
            return Item(memory, source, score, chain=min(reachable, key=lambda c: len(c.path)))
    return Item(memory, source, score)
