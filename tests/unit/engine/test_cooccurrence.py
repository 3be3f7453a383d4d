"""Co-occurrence counts: a pair's count is the same asked before the pending windows are
merged into the matrix (as feedback in a fold asks) and after."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine import cooccurrence
from assocmem.engine.cooccurrence import LINK_WINDOW, Cooccurrence

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
