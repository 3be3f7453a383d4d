"""Reads: query concepts -> evidence from each stage -> ranked items, each saying how it
was found.

Stages, by depth:
- fast: `direct` (the memory carries a query concept) and `fuzzy` (it carries a
  near miss of one: a typo, a prefix, an inflection the stemmer missed);
- standard: + `association` (one followed link from a query concept, ranked by
  PPMI + learned delta) and `context` (the memory written just after or before one of
  the strongest matches, in its stream: engine/recall/context.py);
- deep: + `chain` (concepts personalised PageRank reaches in several steps),
  with the chains between the query concepts.
Every stage adds evidence to one relevance (engine.evidence), so a memory that two strong
links lead to can outrank one that matches a common word only. A time range (given, or
parsed from the query text) ranks the memories in it first, those written in it or
naming it, and adds the unmatched ones in it as `time` items; it never hides a memory
that matches the rest of the query.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from assocmem.engine.errors import InvalidQuery, quoted
from assocmem.engine.position import Position
from assocmem.engine.recall.chains import Chain, chain_along, chains_between, local_graph, pagerank
from assocmem.engine.recall.context import ANCHORS, Neighbour, neighbours
from assocmem.engine.recall.dominance import bounded
from assocmem.engine.recall.evidence import (
    CHAIN,
    DIRECT,
    FUZZY,
    LINK,
    NONE,
    TIME,
    Evidence,
    kinds_of,
)
from assocmem.engine.recall.expiry import expired
from assocmem.engine.recall.filters import Filters, matching
from assocmem.engine.recall.links import LinkWeights, Row, links_of
from assocmem.engine.recall.match import Match, resolve
from assocmem.engine.recall.rank import (
    RECENCY_WEIGHT,
    RECENT_QUERY_RECENCY_WEIGHT,
    TIER_WEIGHTS,
    contenders,
    idf,
    length_norms,
    priors,
    reach,
    top,
)
from assocmem.engine.state.link_rule import link_weight
from assocmem.engine.state.memory import CORE, SUPPLEMENT, Memory
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility, visible

if TYPE_CHECKING:
    import networkx as nx

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
SOURCES = ("direct", "fuzzy", "association", "chain", "time", "context")
"""Item sources, indexed by the kind of evidence that found the memory (engine.evidence);
last, a memory only its place beside a match brought (engine/recall/context.py)."""
assert SOURCES.index("context") == NONE
FUZZY_SHARE = 0.8
"""Evidence a near miss of similarity 1 would give, against a direct match's 1."""
LINK_SHARE = 0.5
"""Evidence the strongest link can give for a query concept, against carrying it."""
LINK_HALF = 1.0
"""Link strength (PPMI + learned delta) that gives half of LINK_SHARE."""
CHAIN_SHARE = 0.25
"""Evidence the concept PageRank reaches most can give, against carrying the query concept."""
COMMON_SHARE, COMMON_MEMORIES = 0.05, 1000
"""A concept carried by more than this share of the memories, and by more than this many,
is not expanded to: it says little, and its postings are the widest a read would walk."""
TIME_MISS = 0.5
"""Factor on the score of a memory outside a read's time range (it still matches)."""
TIME_ONLY = 0.02
"""Relevance of a memory in the time range that matches nothing else."""

__all__ = ["Query", "Recall", "Item", "Via", "recall"]

T = TypeVar("T", float, np.ndarray)


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
    visibility: Visibility = Visibility(everything=True)
    """Which memories the read may see (the request's scopes); all by default."""
    time_concepts: tuple[str, ...] = ()
    """Concepts naming the time range (a year, a month): a memory carrying one is about that
    time, whenever it was written. With `time_hint` instead: the concepts naming the hint."""
    time_hint: TimeRange | None = None
    """A time the question names without asking for it (a date too unsure to apply as a
    range: "add a Code of Conduct document, 2019-09-24"): a memory written in it carries
    `time_concepts`, so no link lifts another past it for lacking them, but it ranks
    nothing first."""
    prefers_recent: bool = False
    """The question asks for the latest memories: recency weighs more."""
    context: bool = True
    """At depth standard and deep: bring the stream neighbours of the strongest matches
    (engine/recall/context.py)."""
    filters: Filters | None = None
    """Conditions on metadata and fields every returned memory meets (engine/recall/filters.py)."""
    expired_before: float | None = None
    """Leave out the memories whose `expires_at` is at or before this time (the reader's
    clock: the engine has none)."""

    def __post_init__(self) -> None:
        if not self.concepts and self.time_range is None:
            raise InvalidQuery(
                "concepts is empty: expected at least one concept (or text to extract them from)"
            )
        if self.depth not in DEPTHS:
            raise InvalidQuery(f"depth {quoted(self.depth)} is invalid: expected one of {DEPTHS}")
        if not 0 <= self.floor <= 1e9:
            raise InvalidQuery(f"floor {self.floor} is out of range: expected 0 or more")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidQuery(f"limit {self.limit} is out of range: expected 1 to {MAX_LIMIT}")
        if not self.kinds or set(self.kinds) - set(KINDS):
            raise InvalidQuery(f"kinds {list(self.kinds)} is invalid: expected some of {KINDS}")
        for name, span in (("time range", self.time_range), ("time hint", self.time_hint)):
            if span and span.end <= span.start:
                raise InvalidQuery(f"{name} is empty: expected start before end")


@dataclasses.dataclass(frozen=True, slots=True)
class Via:
    concept: str
    source: str
    """The query concept the link starts from."""
    label: str
    source_label: str
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
    beside: str | None = None
    """The id of the match it was written beside, where that is what scored it (its source
    is `context` if nothing else found it: engine/recall/context.py)."""
    after: bool = True
    """With `beside`: written after that match (else before it)."""
    taught: float = 0.0
    """With `beside`: what ratings taught the link from that match to it (0: none)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Recall:
    position: Position
    query_concepts: tuple[str, ...]
    depth: str
    matches: tuple[Match, ...]
    expanded_concepts: dict[str, float]
    items: tuple[Item, ...]
    chains: tuple[Chain, ...] = ()
    chain_concepts: dict[str, float] = dataclasses.field(default_factory=dict)
    time_range: TimeRange | None = None
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    """Concept -> the word people read, for the concepts the read named or reached."""
    relabelled: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Concept -> the word people read, where it is not the concept itself: for the items'
    own concepts (the state's table, looked up as shown, not copied for every read)."""


def recall(state: State, query: Query) -> Recall:
    n = len(state.rows)
    now = query.now if query.now is not None else float(state.ts.values.max()) if n else 0.0
    matches = resolve(state, query.concepts)
    slots = {q: k for k, q in enumerate(dict.fromkeys(m.query for m in matches))}
    weights = [0.0] * len(slots)
    for m in matches:
        weights[slots[m.query]] = max(weights[slots[m.query]], idf(state, m.concept))
    evidence = Evidence(weights)
    norms = length_norms(state)
    _match(state, matches, slots, evidence, norms)
    seed_slots: dict[int, int] = {}
    for m in sorted(matches, key=lambda m: -weights[slots[m.query]]):
        seed_slots.setdefault(m.concept, slots[m.query])
    seeds = list(seed_slots)
    vias: dict[int, list[Via]] = {}
    chains: list[Chain] = []
    reached: dict[int, float] = {}
    paths: dict[int, Chain] = {}
    if query.depth != "fast" and seeds:
        links = links_of(state)
        vias = _expand(state, links, seed_slots, weights, query.floor)
        _associate(state, vias, seed_slots, evidence, norms)
        if query.depth == "deep":
            graph = local_graph(links, seeds, query.floor)
            reached = _pagerank_concepts(graph, seeds, set(vias))
            paths = _paths(state, graph, seeds, reached)
            _chain(state, reached, paths, seed_slots, evidence, norms)
            chains = chains_between(state, graph, seeds)
    in_range = None
    if query.time_range is not None:
        in_range = _about(state, query.time_range, query.time_concepts)
        evidence.add(-1, TIME, in_range, 1.0)
        for name in query.time_concepts:
            if name in slots:  # a memory written in the range carries the date it names
                evidence.add(slots[name], TIME, in_range, 1.0)
    elif query.time_hint is not None:
        written = _written_in(state, query.time_hint)
        for name in query.time_concepts:
            if name in slots:
                evidence.carry(slots[name], written)
    candidates = evidence.candidates(n)
    full, direct, carries, kinds = evidence.relevance(candidates, n)
    keep = np.ones(len(candidates), dtype=bool)
    if in_range is not None:
        inside = np.isin(candidates, in_range, assume_unique=True)
        full, direct = (
            np.where(inside, np.maximum(r, TIME_ONLY), r * TIME_MISS) for r in (full, direct)
        )
    if set(query.kinds) != set(KINDS):
        keep &= _is_activity(state, candidates) == (query.kinds == ("activity",))
    keep &= state.alive.values[candidates] if not query.history else state.present(candidates)
    keep &= visible(state, query.visibility, candidates)
    if query.filters is not None:
        keep &= matching(state, query.filters, candidates)
    if query.expired_before is not None:
        keep &= ~expired(state, query.expired_before, candidates)
    rows, full, direct, carries = candidates[keep], full[keep], direct[keep], carries[keep]
    taught = _taught(state, vias, rows)
    # a cap never takes a score below its direct one, so what cannot reach the list even
    # against the direct scores needs none: `contenders` leaves it out
    shares = evidence.shares()
    lifted = bool((full > direct).any())  # else no cap has anything to take (`fast`, say)
    relevance = (
        bounded(full, direct, carries, shares, taught, floor=reach(direct, query.limit))
        if lifted
        else full
    )
    near = contenders(relevance, query.limit)
    rows, relevance, direct, carries = rows[near], relevance[near], direct[near], carries[near]
    taught = taught[near] if taught is not None else None
    recency = RECENT_QUERY_RECENCY_WEIGHT if query.prefers_recent else RECENCY_WEIGHT
    weighed = priors(state, rows, now, recency)
    # again once priors apply: a newer memory's links must not take it past either
    scores = relevance * weighed
    if lifted:
        scores = bounded(scores, direct * weighed, carries, shares, taught)
    best = [(int(rows[k]), score) for k, score in top(np.arange(len(rows)), scores, query.limit)]
    beside: dict[int, Neighbour] = {}
    if query.context and query.depth != "fast" and best:
        anchors = np.array([row for row, _ in best[:ANCHORS]], dtype=np.int64)
        matched = [
            kind in (DIRECT, FUZZY) for kind in kinds_of(candidates, kinds, anchors).tolist()
        ]
        best, beside = _with_context(state, query, best, matched)
    found_by = kinds_of(candidates, kinds, np.array([row for row, _ in best], dtype=np.int64))
    seed_names = {state.concepts[j] for j in seeds}
    items = tuple(
        _beside(
            _item(
                state,
                row,
                round(score, 6),
                SOURCES[found_by[n]],
                vias,
                matches,
                seed_names,
                paths,
            ),
            state,
            beside.get(row),
        )
        for n, (row, score) in enumerate(best)
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
        labels=_labels(state, query.concepts, matches, vias, reached),
        relabelled=state.relabelled,
    )


def _with_context(
    state: State, query: Query, best: list[tuple[int, float]], matched: list[bool]
) -> tuple[list[tuple[int, float]], dict[int, Neighbour]]:
    """`best` (row, score; best first; `matched`: which carry a query concept or a near miss
    of one) with the stream neighbours of its strongest matches where they score higher
    than what they displace, and those neighbours by row."""

    def allowed(rows: np.ndarray) -> np.ndarray:
        keep = visible(state, query.visibility, rows)
        if set(query.kinds) != set(KINDS):
            keep &= _is_activity(state, rows) == (query.kinds == ("activity",))
        keep &= state.alive.values[rows] if not query.history else state.present(rows)
        if query.filters is not None:
            keep &= matching(state, query.filters, rows)
        if query.expired_before is not None:
            keep &= ~expired(state, query.expired_before, rows)
        return keep

    scored = dict(best)
    beside: dict[int, Neighbour] = {}
    for near in neighbours(state, best, matched, allowed):
        if near.score > scored.get(near.row, 0.0):
            scored[near.row] = near.score
            beside[near.row] = near
    ranked = sorted(scored.items(), key=lambda rs: (-round(rs[1], 9), -rs[0]))[: query.limit]
    kept = {row for row, _ in ranked}
    return ranked, {row: n for row, n in beside.items() if row in kept}


def _beside(item: Item, state: State, near: Neighbour | None) -> Item:
    """`item`, saying which match it was written beside if that is what scored it."""
    if near is None:
        return item
    return dataclasses.replace(
        item, beside=state.rows.id_of(near.anchor), after=near.after, taught=near.taught
    )


def _labels(
    state: State,
    concepts: tuple[str, ...],
    matches: list[Match],
    vias: dict[int, list[Via]],
    reached: dict[int, float],
) -> dict[str, str]:
    found = {name: state.label(name) for name in (*concepts, *(m.name for m in matches))}
    found |= {state.concepts[j]: state.labels[j] for j in (*vias, *reached)}
    return found


def _match(
    state: State,
    matches: list[Match],
    slots: dict[str, int],
    evidence: Evidence,
    norms: np.ndarray,
) -> None:
    """Direct and near-miss evidence: tier x BM25 length norm (x similarity for a near miss)."""
    for m in matches:
        rows, tiers = state.postings.of(m.concept)
        value = TIER_WEIGHTS[tiers] * norms[rows]
        if m.is_exact:
            evidence.add(slots[m.query], DIRECT, rows, value)
        else:
            evidence.add(slots[m.query], FUZZY, rows, value * FUZZY_SHARE * m.similarity)


def _expand(
    state: State,
    links: LinkWeights,
    seed_slots: dict[int, int],
    weights: list[float],
    floor: float,
) -> dict[int, list[Via]]:
    """The MAX_EXPANSION concepts one followed link away from the seeds that give the most
    evidence: strong links from telling query concepts first."""
    found: dict[int, list[tuple[int, Row, int]]] = {}
    gain: dict[int, float] = {}
    for seed, slot in seed_slots.items():
        row = links.row(seed, floor)
        reach = min(len(row.targets), MAX_EXPANSION + len(seed_slots))
        shares = weights[slot] * link_share(row.strength[:reach])
        common = max(COMMON_SHARE * len(state.rows), COMMON_MEMORIES)
        for n, j in enumerate(row.targets[:reach].tolist()):
            if j not in seed_slots and state.postings.size(j) <= common:
                found.setdefault(j, []).append((seed, row, n))
                gain[j] = max(gain.get(j, 0.0), float(shares[n]))
    strongest = sorted(found, key=lambda j: (-gain[j], state.concepts[j]))[:MAX_EXPANSION]
    return {j: _vias(state, j, found[j]) for j in strongest}


def _vias(state: State, j: int, links: list[tuple[int, Row, int]]) -> list[Via]:
    vias = []
    for seed, row, n in links:
        count, learned = int(row.count[n]), float(row.learned[n])
        vias.append(
            Via(
                concept=state.concepts[j],
                source=state.concepts[seed],
                label=state.labels[j],
                source_label=state.labels[seed],
                weight=float(link_weight(float(count), learned)),
                count=count,
                learned=learned,
                strength=round(float(row.strength[n]), 6),
                ppmi=round(float(row.ppmi[n]), 6),
            )
        )
    return sorted(vias, key=lambda v: (-v.strength, v.source))


def link_share(strength: T) -> T:
    """Evidence a link of `strength` gives for the concept it starts from (0 to LINK_SHARE)."""
    return LINK_SHARE * strength / (strength + LINK_HALF)


def _associate(
    state: State,
    vias: dict[int, list[Via]],
    seed_slots: dict[int, int],
    evidence: Evidence,
    norms: np.ndarray,
) -> None:
    """A memory carrying an expanded concept (in a tier that matches) holds evidence for each
    query concept the concept is linked from."""
    for j, links in vias.items():
        rows, tiers = state.postings.of(j)
        usable = tiers < SUPPLEMENT
        rows, tiers = rows[usable], tiers[usable]
        shape = TIER_WEIGHTS[tiers] * norms[rows]
        strongest: dict[int, float] = {}
        for via in links:
            slot = seed_slots[state.concept_index[via.source]]
            strongest[slot] = max(strongest.get(slot, 0.0), via.strength)
        for slot, strength in strongest.items():
            evidence.add(slot, LINK, rows, shape * link_share(strength))


def _chain(
    state: State,
    reached: dict[int, float],
    paths: dict[int, Chain],
    seed_slots: dict[int, int],
    evidence: Evidence,
    norms: np.ndarray,
) -> None:
    """Concepts PageRank reached several links away: evidence for the query concept their
    chain starts from, by their rank."""
    if not reached:
        return
    strongest = max(reached.values()) or 1.0
    for j, rank in reached.items():
        if j not in paths:
            continue
        slot = seed_slots[state.concept_index[paths[j].path[0]]]
        rows, tiers = state.postings.of(j)
        usable = tiers <= CORE
        rows, tiers = rows[usable], tiers[usable]
        value = CHAIN_SHARE * rank / strongest * norms[rows]
        evidence.add(slot, CHAIN, rows, value)


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
    import networkx as nx  # not at the top: see engine/recall/chains.py

    _, paths = nx.multi_source_dijkstra(graph, set(seeds), weight="cost")
    return {j: chain_along(state, graph, paths[j]) for j in reached if j in paths}


def _taught(state: State, vias: dict[int, list[Via]], rows: np.ndarray) -> np.ndarray | None:
    """Per row, whether it carries a concept a link feedback taught leads to (None: no read
    link was taught). A superset of the memories such a link found: enough for
    engine.dominance, which looks at those that carry none of the question."""
    concepts = [j for j, links in vias.items() if any(v.learned > 0 for v in links)]
    if not concepts:
        return None
    carried = np.unique(np.concatenate([state.postings.of(j)[0] for j in concepts]))
    return np.isin(rows, carried)


def _about(state: State, time_range: TimeRange, concepts: tuple[str, ...]) -> np.ndarray:
    """Rows written in the range, or carrying a concept that names it (an event of that time)."""
    rows = [_written_in(state, time_range)]
    for name in concepts:
        index = state.concept_index.get(name)
        if index is not None:
            rows.append(state.postings.of(index)[0])
    return np.unique(np.concatenate(rows)).astype(np.int64)


def _written_in(state: State, time_range: TimeRange) -> np.ndarray:
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
