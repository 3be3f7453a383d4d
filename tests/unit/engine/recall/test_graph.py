from __future__ import annotations

import pytest

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.graph import neighbourhood
from tests.unit.engine.make_events import acceptance_notes


def test_depth_two_reaches_links_of_neighbours() -> None:
    state = fold_from_zero(acceptance_notes())
    one = {(e.source, e.target) for e in neighbourhood(state, ["a"], 1)}
    two = {(e.source, e.target) for e in neighbourhood(state, ["a"], 2)}
    assert one == {("a", "b"), ("a", "e")}
    assert two == one | {("b", "c"), ("e", "g")}


@pytest.mark.parametrize("seeds, depth", [([], 1), (["a"] * 21, 1), (["a"], 0), (["a"], 4)])
def test_out_of_range_requests_are_refused(seeds, depth) -> None:
    with pytest.raises(InvalidQuery):
        neighbourhood(fold_from_zero(acceptance_notes()), seeds, depth)
