"""Postings in segments read as one list per concept, however the runs were added and merged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.state import postings as postings_module
from assocmem.engine.state.postings import Postings

# Runs of memories, each memory a few distinct concepts (new concepts appear as runs come)
RUNS = st.lists(
    st.lists(st.sets(st.integers(0, 30), min_size=1, max_size=5), min_size=1, max_size=12),
    min_size=1,
    max_size=12,
)


def fill(runs: list[list[set[int]]]) -> tuple[Postings, dict[int, list[tuple[int, int]]]]:
    """The postings of the runs, and what each concept should read: (row, tier) in order."""
    postings, expected, row = Postings(), {}, 0
    for run in runs:
        first, concepts, tiers, offsets = row, [], [], [0]
        for memory in run:
            for rank, concept in enumerate(sorted(memory)):
                concepts.append(concept)
                tiers.append(rank % 3)
                expected.setdefault(concept, []).append((row, rank % 3))
            offsets.append(len(concepts))
            row += 1
        postings.grow(max(concepts) + 1)
        postings.extend(np.array(offsets), np.array(concepts), np.array(tiers, np.int8), first)
    return postings, expected


def one_each(run: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Run `run` of ten rows, one concept each (`row % 100`)."""
    rows = np.arange(run * 10, run * 10 + 10)
    return np.arange(11), rows % 100, np.zeros(10, dtype=np.int8), run * 10


@pytest.mark.parametrize("merged_at_most", [1 << 22, 8])
@given(runs=RUNS)
@settings(max_examples=60, deadline=None)
def test_each_concept_reads_its_rows_in_order_with_their_tiers(
    runs: list[list[set[int]]], merged_at_most: int
) -> None:
    with pytest.MonkeyPatch.context() as patched:  # 8: merges stop early, segments gather
        patched.setattr(postings_module, "MERGED_AT_MOST", merged_at_most)
        postings, expected = fill(runs)
    for concept in range(40):
        rows, tiers = postings.of(concept)
        assert list(zip(rows.tolist(), tiers.tolist(), strict=True)) == expected.get(concept, [])
        assert postings.size(concept) == len(expected.get(concept, []))


def test_segments_stay_few_as_runs_are_added() -> None:
    postings = Postings()
    postings.grow(100)
    for run in range(200):
        postings.extend(*one_each(run))
    assert len(postings._segments) <= 6
    assert postings.of(7)[0].tolist() == list(range(7, 2000, 100))


def test_no_run_is_merged_into_a_segment_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge into a segment of millions of entries would hold a reader for seconds."""
    monkeypatch.setattr(postings_module, "MERGED_AT_MOST", 16)
    postings = Postings()
    postings.grow(100)
    for run in range(200):
        postings.extend(*one_each(run))
    sizes = [s.entries for s in postings._segments]
    assert len(sizes) >= 50 and max(sizes) <= 16 * (1 + postings_module.MERGE_RATIO)
    assert postings.of(7)[0].tolist() == list(range(7, 2000, 100))
