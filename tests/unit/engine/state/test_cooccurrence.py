"""Co-occurrence counts: a pair's count is the same asked before the pending windows are
merged into the matrix (as feedback in a fold asks) and after."""

from __future__ import annotations

import numpy as np
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.state import cooccurrence
from assocmem.engine.state.cooccurrence import LINK_WINDOW, Cooccurrence, symmetric_counts

LISTS = st.lists(st.lists(st.integers(0, 11), min_size=2, max_size=12), max_size=12)


@given(LISTS, LISTS)
@settings(max_examples=200, deadline=None)
def test_a_count_asked_before_a_merge_is_the_count_after(merged: list, pending: list) -> None:
    kept = cooccurrence.PENDING_LOOKED_THROUGH
    try:
        for looked_through in (kept, 3):  # looked through, or merged once they are many
            cooccurrence.PENDING_LOOKED_THROUGH = looked_through
            check_counts(merged, pending)
    finally:
        cooccurrence.PENDING_LOOKED_THROUGH = kept


def check_counts(merged: list, pending: list) -> None:
    counts = Cooccurrence()
    for indices in merged:
        counts.add_window(indices, LINK_WINDOW, 12)
    counts.matrix()
    for indices in pending:
        counts.add_window(indices, LINK_WINDOW, 12)
    before = {(i, j): counts.count(i, j) for i in range(12) for j in range(12)}
    counts.matrix()
    assert before == {(i, j): counts.count(i, j) for i in range(12) for j in range(12)}
    assert before == {(j, i): n for (i, j), n in before.items()}


@given(st.lists(LISTS, min_size=1, max_size=6), st.sampled_from([1, 4, 1000]))
@settings(max_examples=100, deadline=None)
def test_counts_asked_between_runs_of_windows_are_those_of_all_windows_at_once(
    runs: list, share: int
) -> None:
    """As feedback asks between notes in a fold: the windows merged for a count gather in
    the recent counts (`share`: how soon those go into the whole matrix)."""
    kept = cooccurrence.PENDING_LOOKED_THROUGH, cooccurrence.RECENT_SHARE
    try:
        cooccurrence.PENDING_LOOKED_THROUGH, cooccurrence.RECENT_SHARE = 3, share
        counts, every = Cooccurrence(), Cooccurrence()
        for run in runs:
            for indices in run:
                counts.add_window(indices, LINK_WINDOW, 12)
                every.add_window(indices, LINK_WINDOW, 12)
            asked = {(i, j): counts.count(i, j) for i in range(12) for j in range(12)}
            every.matrix()  # all merged: its counts read off the whole matrix
            assert asked == {(i, j): every.count(i, j) for i in range(12) for j in range(12)}
        assert (counts.matrix() != every.matrix()).nnz == 0
        assert counts.marginals().tolist() == every.marginals().tolist()
    finally:
        cooccurrence.PENDING_LOOKED_THROUGH, cooccurrence.RECENT_SHARE = kept


PAIRS = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=60)


@given(st.lists(LISTS, min_size=1, max_size=6), st.sampled_from([1, 4, 1000]))
@settings(max_examples=100, deadline=None)
def test_rows_and_marginals_read_between_writes_are_those_of_all_windows_at_once(
    runs: list, share: int
) -> None:
    """As a read right after a write asks them: from the whole matrix plus the recent counts,
    without merging every write into the whole matrix first (`share`: how soon they go)."""
    kept = cooccurrence.RECENT_SHARE
    try:
        cooccurrence.RECENT_SHARE = share
        counts, every = Cooccurrence(), Cooccurrence()
        size = 0
        for run in runs:
            for indices in run:
                size = max(size, max(indices) + 1)
                counts.add_window(indices, LINK_WINDOW, size)
                every.add_window(indices, LINK_WINDOW, size)
            merged = every.matrix()
            assert np.array_equal(counts.marginals(), np.asarray(merged.sum(axis=1)).ravel())
            for i in range(size + 1):
                targets, found = counts.row(i)
                assert np.all(np.diff(targets) > 0)  # ascending, each once
                assert dict(zip(targets.tolist(), found.tolist(), strict=True)) == {
                    int(j): int(n) for j, n in zip(*every.row(i), strict=True) if n
                }
        assert (counts.matrix() != every.matrix()).nnz == 0
    finally:
        cooccurrence.RECENT_SHARE = kept


def test_a_read_after_a_write_leaves_the_whole_matrix_as_it_is() -> None:
    counts = Cooccurrence()
    for n in range(200):
        counts.add_window([n % 50, (n * 7) % 50, (n * 11) % 50 + 1], LINK_WINDOW, 51)
    whole = counts.matrix()
    counts.add_window([1, 2, 3], LINK_WINDOW, 51)
    counts.marginals(), counts.row(1)
    assert counts._matrix is whole  # the write went to the recent counts, not the matrix


@given(PAIRS)
@settings(max_examples=200, deadline=None)
def test_symmetric_counts_count_each_pair_both_ways_in_canonical_rows(pairs: list) -> None:
    first = np.array([i for i, _ in pairs], dtype=np.int32)
    second = np.array([j for _, j in pairs], dtype=np.int32)
    counts = symmetric_counts(first, second, 10)
    expected = np.zeros((10, 10), dtype=np.int64)
    for i, j in pairs:
        expected[i, j] += 1
        expected[j, i] += 1
    assert np.array_equal(counts.toarray(), expected)
    for row in range(10):  # each row's columns ascending, none twice: what readers search
        columns = counts.indices[counts.indptr[row] : counts.indptr[row + 1]]
        assert np.all(np.diff(columns) > 0)


MATRICES = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(-3, 3)), max_size=30
)


@given(MATRICES, MATRICES, st.integers(8, 11), st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_delta_grown_onto_its_base_sums_them_and_leaves_the_base_as_it_was(
    base_entries: list, delta_entries: list, size: int, wide_delta: bool
) -> None:
    """As a delta snapshot is applied: the delta as decoded (64-bit indices) or as folded
    (32-bit), onto a base of fewer concepts; an empty delta gives the base's counts."""
    base = _csr(base_entries, 8, np.int32)
    delta = _csr(delta_entries, size, np.int64 if wide_delta else np.int32)
    before = base.toarray()
    total = cooccurrence.grown_sum(base, delta, size)
    expected = np.zeros((size, size), dtype=np.int64)
    expected[:8, :8] = before
    expected += delta.toarray()
    assert total.shape == (size, size)
    assert (total.toarray() == expected).all()
    assert total.has_canonical_format and 0 not in total.data
    assert (base.toarray() == before).all()


def _csr(entries: list, size: int, index_type: type) -> scipy.sparse.csr_array:
    rows, columns, values = zip(*entries, strict=True) if entries else ((), (), ())
    matrix = scipy.sparse.coo_array((values, (rows, columns)), shape=(size, size), dtype=np.int32)
    matrix = matrix.tocsr()
    matrix.eliminate_zeros()
    matrix.sort_indices()
    matrix.indices = matrix.indices.astype(index_type)
    matrix.indptr = matrix.indptr.astype(index_type)
    return matrix
