from __future__ import annotations

import numpy as np
import pytest

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall import links
from tests.unit.engine.make_events import acceptance_notes


def test_a_full_row_cache_drops_the_least_recently_read_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A row read on every query stays cached however many other rows pass through."""
    monkeypatch.setattr(links, "ROW_CACHE", 3)
    weights = links.links_of(fold_from_zero(acceptance_notes()))
    hot = weights.row(0, 1.0)
    first = {}
    for concept in (1, 2, 3, 4):
        first[concept] = weights.row(concept, 1.0)
        assert weights.row(0, 1.0) is hot
    again = weights.row(1, 1.0)
    assert again is not first[1], "the oldest row was dropped"
    assert np.array_equal(again.targets, first[1].targets)
