"""Co-occurrence counts: one symmetric sparse matrix plus a buffer of pairs not yet merged.

The fold only appends pairs to the buffer (cheap); the first reader after a
write merges them into the recent counts, a small matrix that reads add to the whole
one row by row, so that a read right after a write does not pay for the whole matrix;
the recent counts go into it once they hold a quarter of it, or when a snapshot needs
it whole. Python dicts of dicts were the first layout and the slowest part of every
fold: allocating millions of small entries.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import scipy.sparse

from assocmem.engine.state.postings import index_type

COUNT_DTYPE = np.int32
LINK_WINDOW = 8
"""A memory links each concept to the next LINK_WINDOW - 1 in its list: all pairs for short
notes, linear (not quadratic) growth for long text."""
PENDING_LOOKED_THROUGH = 4096
"""Pending windows `count` looks through before it merges them (into the recent counts):
a look is one step per pending window holding both concepts."""
PENDING_AT_MOST = 65_536
"""Pending windows the fold keeps before it merges them into the recent counts unasked: a
replay that merged all of them at its end peaked far higher in memory than one that merges
them this many at a time."""
RECENT_SHARE = 4
"""The recent counts are merged into the whole matrix once they hold a quarter of its
entries: a merge into the whole matrix costs all of it, and feedback in a fold asks for
counts every few thousand notes (a tenth of a replay of a million events went to merging
the whole matrix at each)."""
LINKED_CONCEPTS = 24
"""A memory's strongest concepts (core first) that make links: long text links its key terms,
not its 150 words."""


def window_pairs(lists: list[list[int]], window: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair of items of one list at most `window - 1` apart, for many lists at once
    (one numpy step per distance instead of one per list); pairs of equal items dropped."""
    first, second, _ = _window_pairs(lists, window, grouped=False)
    return first, second


def grouped_window_pairs(
    lists: list[list[int]], window: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`window_pairs`, and the list of each pair (its index in `lists`)."""
    first, second, group = _window_pairs(lists, window, grouped=True)
    assert group is not None
    return first, second, group


def _window_pairs(
    lists: list[list[int]], window: int, grouped: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    assert window <= 127, "distances are compared as int8"
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = np.fromiter(chain.from_iterable(lists), dtype=np.int32, count=int(lengths.sum()))
    # How many items follow each one in its own list (at most `window`): a pair `distance`
    # apart stays within a list where that is `distance` or more. One byte an item, where
    # comparing each item's list number took a third longer (fold merges, 4.5 million pairs).
    after = np.repeat(np.cumsum(lengths), lengths) - np.arange(1, len(flat) + 1)
    after = np.minimum(after, window).astype(np.int8)
    group = np.repeat(np.arange(len(lists), dtype=np.int64), lengths) if grouped else None
    firsts, seconds, groups = [], [], []
    for distance in range(1, window):
        same = after[:-distance] >= distance
        firsts.append(flat[:-distance][same])
        seconds.append(flat[distance:][same])
        if group is not None:
            groups.append(group[:-distance][same])
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    keep = first != second
    return first[keep], second[keep], np.concatenate(groups)[keep] if groups else None


def symmetric_counts(first: np.ndarray, second: np.ndarray, size: int) -> scipy.sparse.csr_array:
    """The canonical CSR matrix counting each pair (first[k], second[k]) both ways.

    Each pair is counted once, in the lower triangle, and the matrix is that plus its
    transpose: two linear scatters of the pairs (instead of scipy's sort of every row: the
    pairs go into rows unsummed and unsorted, and turning that into the rows of its
    transpose lists each row's columns in order, so summing the repeats is one more pass),
    then one of the summed half only. Both halves scattered from the start took several
    times as long: most pairs of a run of notes repeat.
    """
    low, high = np.minimum(first, second), np.maximum(first, second)
    ones = np.ones(len(low), dtype=COUNT_DTYPE)
    pairs = scipy.sparse.coo_array((ones, (low, high)), shape=(size, size))
    pairs.has_canonical_format = True  # not so: it stops tocsr summing (and sorting) here
    lower = pairs.tocsr().T.tocsr()  # sorted: scipy marks it so
    lower.sum_duplicates()
    return (lower + lower.T.tocsr()).tocsr()  # the sum of two canonical halves: canonical


class Cooccurrence:
    def __init__(self) -> None:
        self._matrix = _empty()
        self._recent = _empty()
        """Counts merged for `count` and not yet into `_matrix` (canonical, or empty)."""
        self._pending: list[list[int]] = []
        """Index lists not yet counted, each of LINK_WINDOW (one window for all)."""
        self._pending_with: dict[int, list[int]] = {}
        """Per concept, which pending lists hold it: `count` needs no merge (feedback in a
        fold asks for counts between notes, and a merge costs the whole matrix)."""
        self._indexed = 0
        """How many of the pending lists `_pending_with` covers."""
        self._size = 0
        self._marginals = np.zeros(0, dtype=np.int64)
        """Row sums of `_matrix` alone."""
        self._recent_marginals: np.ndarray | None = None
        """Row sums of `_recent`, sized to the concepts known (None: not summed since it changed)."""
        self._reduction = _empty()
        self.version = 0
        """Bumped on every change, so derived views (PPMI rows) know when to recompute."""

    def add_window(self, indices: list[int], window: int, size: int) -> None:
        """Count each pair of `indices` at most `window - 1` apart; `size` = concepts known."""
        self._size = max(self._size, size)
        if len(indices) < 2:
            return
        assert window == LINK_WINDOW, "pending lists share one window"
        if len(self._pending) >= PENDING_AT_MOST:
            self._merge_recent()
        self._pending.append(indices)
        self.version += 1

    def remove_window(self, indices: list[int], window: int, size: int) -> None:
        """Take off what `add_window` of `indices` counted (a deleted memory's links): off the
        counts, and what consolidation took already off what it took, so that the counts as
        written lose exactly these."""
        self._size = max(self._size, size)
        if len(indices) < 2:
            return
        first, second = window_pairs([indices], window)
        removed = symmetric_counts(first, second, self._size)
        left = (self.matrix() - removed).tocsr()
        short = left.minimum(0).tocsr()  # pairs consolidation had decayed below the removal
        reduction = self.reduction()
        if short.nnz:
            left = (left - short).tocsr()
            reduction = (reduction + short).tocsr()
        left.eliminate_zeros()
        left.sort_indices()
        self.load(left, reduction)

    def grow(self, size: int) -> None:
        self._size = max(self._size, size)

    def matrix(self) -> scipy.sparse.csr_array:
        """The symmetric counts matrix, concepts x concepts, canonical (sorted, no duplicates)."""
        if self._pending or self._recent.nnz or self._matrix.shape[0] != self._size:
            self._merge()
        return self._matrix

    def marginals(self) -> np.ndarray:
        """Per concept, the sum of its counts (its row sum). Like `row`, it counts the pending
        windows into the recent counts only: a read right after a write would otherwise pay
        for merging the whole matrix."""
        self._merge_recent()
        if self._recent_marginals is None:
            recent = np.asarray(self._recent.sum(axis=1), dtype=np.int64).ravel()
            self._recent_marginals = sized(recent, self._size)
        return sized(self._marginals, self._size) + self._recent_marginals

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The concepts `i` co-occurs with (ascending) and the counts."""
        self._merge_recent()
        targets, counts = _row_in(self._matrix, i)
        more, added = _row_in(self._recent, i)
        if not len(more):
            return targets, counts
        together, at = np.unique(np.concatenate([targets, more]), return_inverse=True)
        summed = np.zeros(len(together), dtype=COUNT_DTYPE)
        np.add.at(summed, at, np.concatenate([counts, added]))
        return together, summed

    def count(self, i: int, j: int) -> int:
        """The count of one pair, merged or not: the pending windows are looked through
        while they are few, and merged first once they are many (a common concept is in
        most of them, and a fold from zero merges nothing otherwise)."""
        if len(self._pending) > PENDING_LOOKED_THROUGH:
            self._merge_recent()
        return (
            _count_in(self._matrix, i, j)
            + _count_in(self._recent, i, j)
            + self._pending_count(i, j)
        )

    def _merge_recent(self) -> None:
        """The pending windows into the recent counts, and those into the whole matrix once
        they are RECENT_SHARE of it."""
        if not self._pending and self._recent.shape[0] == self._size:
            return
        self._recent = self._plus_pending(self._recent)
        self._recent_marginals = None
        if self._recent.nnz * RECENT_SHARE >= self._matrix.nnz:
            self._merge()

    def _pending_count(self, i: int, j: int) -> int:
        if i == j:
            return 0
        self._index_pending()
        with_i, with_j = self._pending_with.get(i), self._pending_with.get(j)
        if not with_i or not with_j:
            return 0
        shorter, longer = sorted((with_i, with_j), key=len)
        both = set(shorter).intersection(longer)
        count = 0
        for n in both:
            where = self._pending[n]
            at_i = [k for k, c in enumerate(where) if c == i]
            at_j = [k for k, c in enumerate(where) if c == j]
            count += sum(1 for a in at_i for b in at_j if abs(a - b) < LINK_WINDOW)
        return count

    def _index_pending(self) -> None:
        """Index the pending lists added since the last count (a fold of notes alone, which
        asks for no count, never pays for it)."""
        with_ = self._pending_with
        for at in range(self._indexed, len(self._pending)):
            for i in self._pending[at]:
                found = with_.get(i)
                if found is None:
                    with_[i] = [at]
                elif found[-1] != at:
                    found.append(at)
        self._indexed = len(self._pending)

    def reduction(self) -> scipy.sparse.csr_array:
        """What consolidation took off the counts: the counts as written are matrix() + this."""
        return grown(self._reduction, self._size)

    def written(self) -> scipy.sparse.csr_array:
        """Every co-occurrence ever counted, consolidation undone."""
        return _compact((self.matrix() + self.reduction()).tocsr())

    def load(
        self,
        matrix: scipy.sparse.csr_array,
        reduction: scipy.sparse.csr_array | None = None,
    ) -> None:
        """Take `matrix` as the counts (and `reduction` as what consolidation took off them)."""
        if reduction is not None:
            reduction = _compact(reduction.tocsr())
            reduction.eliminate_zeros()
            reduction.sort_indices()
            self._reduction = reduction
        matrix = _compact(matrix)
        self._matrix = matrix
        self._recent = _empty()
        self._recent_marginals = None
        self._size = matrix.shape[0]
        self._pending, self._pending_with, self._indexed = [], {}, 0
        self._marginals = np.asarray(matrix.sum(axis=1), dtype=np.int64).ravel()
        self.version += 1

    def _merge(self) -> None:
        """Everything into the whole matrix: the recent counts and the pending windows."""
        base = grown(self._matrix, self._size)
        if self._recent.nnz:
            base = (base + grown(self._recent, self._size)).tocsr()
            self._recent = _empty()
        self._recent_marginals = None
        self._matrix = self._plus_pending(base)
        self._marginals = np.asarray(self._matrix.sum(axis=1), dtype=np.int64).ravel()

    def _plus_pending(self, matrix: scipy.sparse.csr_array) -> scipy.sparse.csr_array:
        """`matrix` with the pending windows counted in, canonical; the windows let go."""
        matrix = grown(matrix, self._size)
        if self._pending:
            first, second = window_pairs(self._pending, LINK_WINDOW)
            added = symmetric_counts(first, second, self._size)
            matrix = added if matrix.nnz == 0 else (matrix + added).tocsr()
            self._pending, self._pending_with, self._indexed = [], {}, 0
        matrix.sum_duplicates()
        matrix.sort_indices()
        return _compact(matrix)


def _row_in(matrix: scipy.sparse.csr_array, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Row `i` of `matrix` (its columns ascending, and their counts), as views; empty past it."""
    if i >= matrix.shape[0]:
        return np.zeros(0, dtype=matrix.indices.dtype), np.zeros(0, dtype=COUNT_DTYPE)
    start, end = matrix.indptr[i], matrix.indptr[i + 1]
    return matrix.indices[start:end], matrix.data[start:end]


def sized(values: np.ndarray, size: int) -> np.ndarray:
    """`values` (one per concept) cut or padded with zeros to `size` concepts."""
    if len(values) >= size:
        return values[:size]
    return np.concatenate([values, np.zeros(size - len(values), dtype=values.dtype)])


def _empty() -> scipy.sparse.csr_array:
    return scipy.sparse.csr_array((0, 0), dtype=COUNT_DTYPE)


def _count_in(matrix: scipy.sparse.csr_array, i: int, j: int) -> int:
    """Entry (i, j) of a canonical CSR matrix, 0 outside it."""
    if i >= matrix.shape[0] or j >= matrix.shape[0]:
        return 0
    start, end = matrix.indptr[i], matrix.indptr[i + 1]
    at = np.searchsorted(matrix.indices[start:end], j)
    if at < end - start and matrix.indices[start + at] == j:
        return int(matrix.data[start + at])
    return 0


def grown_sum(
    base: scipy.sparse.csr_array, delta: scipy.sparse.csr_array, size: int
) -> scipy.sparse.csr_array:
    """`base + delta`, both grown to `size` x `size`: canonical, without zeros, and `base`
    itself (grown, its arrays shared) when `delta` is empty, as it is in a delta snapshot
    that records only reads. `base` is never changed, and the delta takes the base's index
    type first: with mixed types scipy copied the whole base to 64-bit indices and back
    (a third of applying a delta to 50,000 memories)."""
    if delta.nnz == 0:
        return grown(base, size)
    delta = delta.tocsr()
    if delta.indices.dtype != base.indices.dtype and index_type(delta.nnz) is np.int32:
        delta = _compact(delta.copy())
    total = (grown(base, size) + grown(delta, size)).tocsr()
    total.eliminate_zeros()
    total.sort_indices()
    return total


def _compact(matrix: scipy.sparse.csr_array) -> scipy.sparse.csr_array:
    """32-bit indices and index pointers while they fit (scipy wants both of one type)."""
    dtype = index_type(matrix.nnz)
    matrix.indices = matrix.indices.astype(dtype, copy=False)
    matrix.indptr = matrix.indptr.astype(dtype, copy=False)
    return matrix


def grown(matrix: scipy.sparse.csr_array, size: int) -> scipy.sparse.csr_array:
    """`matrix` as `size` x `size` (more concepts, none of their counts yet): its arrays
    shared, not copied (no one writes into a counts matrix: each change makes a new one)."""
    if matrix.shape[0] == size:
        return matrix
    indptr = np.concatenate(
        [
            matrix.indptr,
            np.full(size - matrix.shape[0], matrix.indptr[-1], dtype=matrix.indptr.dtype),
        ]
    )
    return scipy.sparse.csr_array((matrix.data, matrix.indices, indptr), shape=(size, size))
