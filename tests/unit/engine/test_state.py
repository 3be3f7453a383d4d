"""The bulk steps that index memories: the same answers as one memory at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.state import CORE, IMPORTANT, SUPPLEMENT, tiers_of

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
