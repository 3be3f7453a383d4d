"""Link strength: PPMI of the written co-occurrence counts and the taught deltas together.

A raw count makes the most common words everybody's strongest neighbour;
PPMI (positive pointwise mutual information, with the context distribution
smoothed by 0.75 as in Levy, Goldberg & Dagan 2015) asks whether two concepts
meet more often than chance. Feedback counts as if the two concepts had been written
together TAUGHT_COUNT more times per unit of learned delta: a rating that links a
telling question concept to a rare concept makes a strong link, and one that links a
concept everybody uses (a speaker's name in every question) or links to one makes a
weak one, however often it is repeated. Derived per row from the exact counts, deltas
and marginals, so it is always in step with the fold and never stored.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np

from assocmem.engine.state.link_rule import is_followed, row_links
from assocmem.engine.state.state import State

CONTEXT_SMOOTHING = 0.75
ROW_CACHE = 4096
"""Concept rows whose strengths a state keeps between reads, the least recently read dropped first."""
ROW_TOP = 64
"""Strongest links kept per row: expansion and chains never look further down."""
TAUGHT_COUNT = 2.0
"""Co-occurrences one unit of learned delta counts as."""
MIN_TAUGHT_STRENGTH = 0.1
"""Strength of a taught link whose PPMI is nil: a taught link is always followed."""


@dataclasses.dataclass(frozen=True, slots=True)
class Row:
    """The ROW_TOP strongest followed links of one concept, strongest first."""

    targets: np.ndarray
    strength: np.ndarray
    """PPMI of written + taught counts: what expansion and chains rank by."""
    ppmi: np.ndarray
    """PPMI of the written counts alone."""
    count: np.ndarray
    learned: np.ndarray


class LinkWeights:
    """Rows of link strengths for one state version; `links_of` hands out the current one."""

    def __init__(self, state: State) -> None:
        self.learned = state.learned  # not the state: it keeps this object in `derived`
        self.counts = state.counts
        marginals = state.counts.marginals().astype(np.float64)
        self.marginals = marginals
        self.context = marginals**CONTEXT_SMOOTHING
        self.context_total = float(self.context.sum()) or 1.0
        self.version = links_version(state)
        self._rows: OrderedDict[tuple[int, float], Row] = OrderedDict()

    def row(self, i: int, floor: float) -> Row:
        key = (i, floor)
        found = self._rows.get(key)
        if found is None:
            found = self._rows[key] = self._compute(i, floor)
            if len(self._rows) > ROW_CACHE:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end(key)
        return found

    def ppmi(self, i: int, targets: np.ndarray, counts: np.ndarray) -> np.ndarray:
        if not len(targets) or self.marginals[i] == 0:
            return np.zeros(len(targets))
        # A concept only ever taught (never written) has no marginal of its own: its taught
        # co-occurrences stand in for it, so its PMI stays finite.
        context = self.context[targets]
        context = np.where(context > 0, context, counts**CONTEXT_SMOOTHING)
        with np.errstate(divide="ignore", invalid="ignore"):  # counts of 0: masked below
            pmi = np.log(counts * self.context_total / (self.marginals[i] * context))
        return np.where(counts > 0, np.maximum(pmi, 0.0), 0.0)

    def _compute(self, i: int, floor: float) -> Row:
        targets, counts, learned = row_links(self.counts, self.learned, i)
        followed = is_followed(counts, learned, floor)
        targets, counts, learned = targets[followed], counts[followed], learned[followed]
        ppmi = self.ppmi(i, targets, counts)
        together = np.maximum(counts + TAUGHT_COUNT * learned, 0.0)
        strength = self.ppmi(i, targets, together)
        strength = np.where(learned > 0, np.maximum(strength, MIN_TAUGHT_STRENGTH), strength)
        keep = strength > 0
        targets, counts, learned, ppmi, strength = (
            a[keep] for a in (targets, counts, learned, ppmi, strength)
        )
        if len(strength) > ROW_TOP:
            top = np.argpartition(-strength, ROW_TOP)[:ROW_TOP]
            targets, counts, learned, ppmi, strength = (
                a[top] for a in (targets, counts, learned, ppmi, strength)
            )
        order = np.lexsort((targets, -strength))
        return Row(targets[order], strength[order], ppmi[order], counts[order], learned[order])


def pair_ppmi(state: State, source: str, target: str) -> float:
    """PPMI of the written counts of the link source -- target (concept keys) in `state`:
    0 where either concept or the link is missing."""
    i, j = state.concept_index.get(source), state.concept_index.get(target)
    if i is None or j is None or i == j:
        return 0.0
    count = float(state.counts.count(i, j))
    if not count:
        return 0.0
    return float(links_of(state).ppmi(i, np.array([j]), np.array([count]))[0])


def links_of(state: State) -> LinkWeights:
    cached = state.derived.get(state.links_key)
    if not isinstance(cached, LinkWeights) or cached.version != links_version(state):
        cached = state.derived[state.links_key] = LinkWeights(state)
    return cached  # type: ignore[no-any-return]


def links_version(state: State) -> tuple[object, int, int]:
    """What every link's weight depends on: a value derived from the links is good while
    this stays the same."""
    return (state.counts.version, state.learned_version, len(state.concepts))
