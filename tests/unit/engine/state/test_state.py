"""The bulk steps that index memories: the same answers as one memory at a time; a state
let go is freed."""

from __future__ import annotations

import gc
import weakref
from array import array

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.events.consolidation import Rule
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.recall.chains import find_chains
from assocmem.engine.recall.graph import neighbourhood
from assocmem.engine.recall.links import links_of
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.engine.snapshot.delta import load_snapshot
from assocmem.engine.state.memory import CORE, IMPORTANT, SUPPLEMENT
from assocmem.engine.state.scoped_links import links_view
from assocmem.engine.state.state import State, tiers_of
from assocmem.engine.state.visibility import Visibility
from tests.unit.engine.make_events import (
    accessed,
    activity,
    consolidated,
    document,
    feedback,
    written,
)
from tests.unit.engine.state.test_scoped_links import about

MEMORIES = st.lists(
    st.integers(0, 6).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(0, n).flatmap(lambda m: st.tuples(st.integers(0, m), st.just(m))),
        )
    ),
    max_size=30,
)
"""(concepts, (core, matched)) of each memory: 0 <= core <= matched <= concepts."""


@given(MEMORIES)
def test_each_concept_has_the_tier_its_place_in_its_memory_gives(memories: list) -> None:
    expected = [
        CORE if place < core else IMPORTANT if place < matched else SUPPLEMENT
        for length, (core, matched) in memories
        for place in range(length)
    ]
    lengths = np.array([length for length, _ in memories], dtype=np.int64)
    core = np.array([c for _, (c, _) in memories], dtype=np.int64)
    matched = np.array([m for _, (_, m) in memories], dtype=np.int64)
    assert tiers_of(lengths, core, matched).tolist() == expected


def used_state() -> State:
    """A state loaded from a snapshot, folded on, and read every way a read reads one."""
    state = fold_from_zero(
        [
            about(written(1, ["card", "diabetes"]), "alice"),
            written(2, ["card", "checkout"]),
            activity(3, ["card", "travel"]),
            document(4, [["card", "refund"]]),
            feedback(5, ["2-0"], 1.0, ["card", "checkout"]),
        ]
    )
    state = load_snapshot(dump_state(state), lambda base: None)
    fold(state, [accessed(6, ["1-0"]), consolidated(7, state, Rule(at=8.0, min_cooccurrence=1))])
    for visibility in (Visibility(), Visibility(user="alice")):
        view = links_view(state, visibility)
        assert recall(view, Query(("card",), now=10.0, visibility=visibility)).items
        find_chains(view, links_of(view), ("card", "checkout"), 0.0)
        neighbourhood(view, ["card"], 2)
    content_hash(state)
    return state


def test_a_state_let_go_is_freed_by_reference_counting_alone() -> None:
    """Long-lived processes freeze a state once folded (workers/state/heap.py), out of the
    collector's sight: a cycle through it would keep every state they let go."""
    state = used_state()
    gone = weakref.ref(state)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del state
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()


def test_a_concept_looked_up_before_another_note_interned_it_is_not_interned_twice() -> None:
    state = State()
    state.indices_of(["a"])
    looked_up = array("i", [state.concept_index.get(c, -1) for c in "abc"])  # as decoded
    state.indices_of(["c", "d"])  # a note folded in between
    assert state.interned(["a", "b", "c"], looked_up, (1, 2)).tolist() == [0, 3, 1]
    assert state.concepts == ["a", "c", "d", "b"]
    assert state.concept_index == {"a": 0, "c": 1, "d": 2, "b": 3}
