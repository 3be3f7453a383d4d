"""Links kept apart by scope: a read follows only the links written or taught in the scopes
whose memories it sees (engine/state/visibility.py), so one user's notes and feedback never lead
another user's reads, chains or graph anywhere.

The state keeps the tenant's links whole (`counts`, `learned`: what audits, consolidation,
snapshots and an admin read see) and, apart, what came from scopes other than the common
one: the written links of a scoped memory follow from its concepts (counted here, on
demand, from the memories), a scoped document unit's from `State.private_units`, and each
scope's share of a taught delta is in `State.private_learned`. A read in a scope gets a view
of the state whose links are

    written: min(whole, max(whole - every scope's, 0) + the seen scopes')
    taught:  whole - the hidden scopes' shares

(a read in a namespace does not see the common scope: its links are the seen scopes' alone).

Without consolidation the written part is exactly the common links plus the seen scopes';
consolidation decays and prunes the whole counts only, and the `min` keeps a scope's links
from outliving what consolidation left of them. A tenant with no scoped memory, document or
feedback reads its state itself, at no cost.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from assocmem.engine.state.cooccurrence import (
    COUNT_DTYPE,
    LINK_WINDOW,
    LINKED_CONCEPTS,
    Cooccurrence,
    sized,
)
from assocmem.engine.state.memory import COMMON, Scope
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import SEEN_KEPT, Visibility, visible

VIEWS_KEPT = 16
"""Scoped views a state keeps (per set of seen scopes), the least recently used dropped."""
ZERO_SHARE = 1e-9
"""A taught delta this close to zero once hidden shares are taken off is no link."""


class ScopedCounts:
    """The written links of each scope other than the common one, counted from the
    memories and units as they are added (a derived view: never snapshotted or hashed)."""

    def __init__(self) -> None:
        self.by_scope: dict[Scope, Cooccurrence] = {}
        self.every = Cooccurrence()
        """Every scope's together."""
        self._rows = 0
        """How many of `State.scoped_rows` are counted."""
        self._units = 0
        self._size = 0
        self._seen: OrderedDict[tuple[Visibility, object], Any] = OrderedDict()

    def seen(self, state: State, visibility: Visibility) -> tuple[bool, tuple[Scope, ...]] | None:
        """Whether `visibility` sees the common scope, and the other scopes that made links
        which it sees; None when it sees every one (the state's own links are its)."""
        key = (visibility, (self.version(), state.learned_version))
        if key not in self._seen:
            scopes = set(self.by_scope)
            scopes.update(s for shares in state.private_learned.values() for s in shares)
            seen = tuple(sorted((s for s in scopes if visibility.sees_scope(s)), key=repr))
            common = visibility.sees_scope(COMMON)
            self._seen[key] = None if common and len(seen) == len(scopes) else (common, seen)
            if len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
        self._seen.move_to_end(key)
        return self._seen[key]

    def update(self, state: State) -> None:
        size = len(state.concepts)
        for row in state.scoped_rows[self._rows :]:
            linked = state.rows.linked(row, LINKED_CONCEPTS)
            if len(linked) >= 2 and row not in state.deleted:
                self._add(state.rows.scope(row), linked, size)
        for scope, indices in state.private_units[self._units :]:
            self._add(scope, indices, size)
        self._rows, self._units = len(state.scoped_rows), len(state.private_units)
        if size != self._size:
            self._size = size
            self.every.grow(size)
            for counts in self.by_scope.values():
                counts.grow(size)

    def _add(self, scope: Scope, indices: list[int], size: int) -> None:
        counts = self.by_scope.get(scope)
        if counts is None:
            counts = self.by_scope[scope] = Cooccurrence()
        counts.add_window(indices, LINK_WINDOW, size)
        self.every.add_window(indices, LINK_WINDOW, size)

    def version(self) -> tuple[int, int]:
        return (self._rows, self._units)


class CountsView:
    """The counts a scope sees, row by row (what links, graphs and chains ask of counts)."""

    def __init__(
        self, whole: Cooccurrence, every: Cooccurrence, seen: list[Cooccurrence], common: bool
    ) -> None:
        self._whole, self._every, self._seen, self._common = whole, every, seen, common
        self._marginals: np.ndarray | None = None
        self.version = (whole.version, every.version, common, *(c.version for c in seen))

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        targets, whole = self._whole.row(i)
        if not len(targets):
            return targets, whole
        seen = sum((_at(c, i, targets) for c in self._seen), np.zeros(len(targets), np.int64))
        common = np.maximum(whole - _at(self._every, i, targets), 0) if self._common else 0
        counts = np.minimum(whole, common + seen)
        keep = counts > 0
        return targets[keep], counts[keep].astype(COUNT_DTYPE)

    def count(self, i: int, j: int) -> int:
        targets, counts = self.row(i)
        at = np.searchsorted(targets, j)
        return int(counts[at]) if at < len(targets) and targets[at] == j else 0

    def marginals(self) -> np.ndarray:
        if self._marginals is None:
            whole = self._whole.marginals()
            size = len(whole)
            seen = sum((sized(c.marginals(), size) for c in self._seen), np.zeros(size, np.int64))
            common = np.maximum(whole - sized(self._every.marginals(), size), 0)
            self._marginals = np.minimum(whole, common * self._common + seen)
        return self._marginals


class LearnedView:
    """The taught deltas a scope sees, row by row (`get`, as links, graphs and chains read a
    dict of rows): `base` (State.learned, or nothing when the common scope is not seen) plus
    `shift` (less the hidden scopes' shares, or the seen scopes' shares alone)."""

    def __init__(self, base: dict[int, dict[int, float]], shift: dict[int, dict[int, float]]):
        self._base, self._shift = base, shift

    def get(self, i: int, default: Any = None) -> Any:
        row = self._base.get(i)
        shift = self._shift.get(i)
        if not shift:
            return default if row is None else row
        seen = dict(row or {})
        for j, share in shift.items():
            value = seen.get(j, 0.0) + share
            if abs(value) < ZERO_SHARE:
                seen.pop(j, None)
            else:
                seen[j] = value
        return seen or default


class ScopedState(State):
    """A state as one scope sees it: its links (counts, learned) are the scope's, and the
    memories that witness a link are the ones it sees; the rest is the state's own."""

    visibility: Visibility

    def together(self, i: int, j: int, limit: int) -> list[int]:
        wanted = limit
        while True:
            rows = State.together(self, i, j, wanted)
            seen = np.asarray(rows, dtype=np.int64)
            kept = seen[visible(self, self.visibility, seen)].tolist()
            if len(kept) >= limit or len(rows) < wanted:
                return kept[:limit]
            wanted *= 4


def links_view(state: State, visibility: Visibility) -> State:
    """The state as a read with `visibility` sees its links: the state itself when it sees
    every scope that made a link."""
    if visibility.everything:
        return state
    unscoped = not (state.scoped_rows or state.private_units or state.private_learned)
    if unscoped and visibility.sees_scope(COMMON):
        return state
    scoped = state.derived.get("scoped_counts")
    if not isinstance(scoped, ScopedCounts):
        scoped = state.derived["scoped_counts"] = ScopedCounts()
    scoped.update(state)
    sight = scoped.seen(state, visibility)
    if sight is None:
        return state
    common, seen = sight
    views = state.derived.setdefault("scoped_views", OrderedDict())
    assert isinstance(views, OrderedDict)
    version = (state.counts.version, state.learned_version, scoped.version(), len(state.concepts))
    key = (common, seen)
    cached = views.get(key)
    if cached is None or cached[0] != version:
        counts = CountsView(
            state.counts,
            scoped.every,
            [scoped.by_scope[s] for s in seen if s in scoped.by_scope],
            common,
        )
        learned = (
            LearnedView(state.learned, _shares(state, lambda s: s not in seen, -1.0))
            if common
            else LearnedView({}, _shares(state, lambda s: s in seen, 1.0))
        )
        cached = views[key] = (version, counts, learned)
        if len(views) > VIEWS_KEPT:
            dropped, _ = views.popitem(last=False)
            state.derived.pop(("links", dropped), None)  # its link strengths go with it
    views.move_to_end(key)
    view = ScopedState.__new__(ScopedState)
    view.__dict__.update(state.__dict__)
    view.counts, view.learned = cached[1], cached[2]  # type: ignore[assignment]
    view.visibility = visibility
    view.links_key = ("links", key)
    return view


def _shares(
    state: State, counted: Callable[[Scope], bool], sign: float
) -> dict[int, dict[int, float]]:
    """Per concept, `sign` times the taught shares of the scopes `counted`, by linked concept."""
    found: dict[int, dict[int, float]] = {}
    for (i, j), shares in state.private_learned.items():
        share = sign * sum(v for s, v in shares.items() if counted(s))
        if share:
            found.setdefault(i, {})[j] = share
            found.setdefault(j, {})[i] = share
    return found


def _at(counts: Cooccurrence, i: int, targets: np.ndarray) -> np.ndarray:
    """The counts of row `i` at `targets` (ascending), 0 where it has none."""
    have, values = counts.row(i)
    if not len(have):
        return np.zeros(len(targets), dtype=np.int64)
    at = np.minimum(np.searchsorted(have, targets), len(have) - 1)
    return np.where(have[at] == targets, values[at], 0).astype(np.int64)
