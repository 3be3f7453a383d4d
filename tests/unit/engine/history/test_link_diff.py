"""A diff of two points lists exactly the links whose written count or taught delta
differs, each in its kind, biggest change of weight first, and counts them all."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.history.link_diff import LinkChangeBetween, link_difference, links_of
from assocmem.engine.state.link_rule import link_weight
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import feedback, written
from tests.unit.engine.state.test_fold_properties import histories


def every_link(state: State) -> dict[tuple[str, str], tuple[int, float]]:
    """The reference: (source, target) in name order -> (count, delta), one link at a time."""
    links: dict[tuple[str, str], tuple[int, float]] = {}
    matrix = state.counts.matrix().tocoo()
    for i, j, count in zip(matrix.row, matrix.col, matrix.data, strict=True):
        if i < j:
            links[_named(state, int(i), int(j))] = (int(count), 0.0)
    for i, row in state.learned.items():
        for j, delta in row.items():
            if i < j:
                key = _named(state, i, j)
                links[key] = (links.get(key, (0, 0.0))[0], delta)
    return links


def _named(state: State, i: int, j: int) -> tuple[str, str]:
    a, b = state.concepts[i], state.concepts[j]
    return (a, b) if a < b else (b, a)


def expected(before: State, after: State) -> dict[str, set[LinkChangeBetween]]:
    old, new = every_link(before), every_link(after)
    kinds: dict[str, set[LinkChangeBetween]] = {
        "appeared": set(),
        "vanished": set(),
        "changed": set(),
    }
    for key in old.keys() | new.keys():
        was, now = old.get(key, (0, 0.0)), new.get(key, (0, 0.0))
        if was == now:
            continue
        alive = [float(link_weight(float(c), d)) > 0 for c, d in (was, now)]
        kind = (
            "appeared"
            if alive == [False, True]
            else "vanished"
            if alive == [True, False]
            else "changed"
        )
        labels = [after.label(c) if c in after.concept_index else before.label(c) for c in key]
        kinds[kind].add(LinkChangeBetween(*labels, key[0], key[1], was, now))
    return kinds


def moved(change: LinkChangeBetween) -> float:
    return abs(
        float(link_weight(float(change.after[0]), change.after[1]))
        - float(link_weight(float(change.before[0]), change.before[1]))
    )


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_a_diff_either_way_lists_what_changed_biggest_first_and_counts_it(
    events: list[Event], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(events)))
    first, second = fold_from_zero(events[:cut]), fold_from_zero(events)
    for before, after in [(first, second), (second, first)]:  # back in time, too
        found = link_difference(links_of(before), links_of(after), None)
        wanted = expected(before, after)
        for kind, listed in [
            ("appeared", found.appeared),
            ("vanished", found.vanished),
            ("changed", found.changed),
        ]:
            assert set(listed) == wanted[kind] and len(listed) == len(wanted[kind])
            assert found.totals[kind] == len(listed)
            sizes = [moved(c) for c in listed]
            assert sizes == sorted(sizes, reverse=True)


def test_a_limit_keeps_the_biggest_changes_of_each_kind_and_counts_the_rest() -> None:
    notes = [written(n, ["a", f"x{n % 5}"]) for n in range(1, 31)]  # a -- x0..x4, 6 each
    before = fold_from_zero(notes[:5])
    after = fold_from_zero([*notes, feedback(31, ["1-0"], 1.0, ["a", "y"])])
    found = link_difference(links_of(before), links_of(after), 2)
    # the rating teaches y to the rated note's concepts, a and x1
    assert found.totals == {"appeared": 2, "vanished": 0, "changed": 5}
    assert {(c.source, c.target) for c in found.appeared} == {("a", "y"), ("x1", "y")}
    assert [c.after[0] - c.before[0] for c in found.changed] == [5, 5]
    assert len(found.changed) == 2 and found.vanished == []


def test_a_folded_on_state_is_diffed_against_the_links_taken_before_it_folded() -> None:
    from assocmem.engine.events.fold import fold

    state = fold_from_zero([written(1, ["a", "b"])])
    taken = links_of(state)
    fold(state, [written(2, ["a", "b"]), written(3, ["c", "d"])])
    found = link_difference(taken, links_of(state), None)
    assert [(c.source, c.target, c.before, c.after) for c in found.changed] == [
        ("a", "b", (1, 0.0), (2, 0.0))
    ]
    assert [(c.source, c.target) for c in found.appeared] == [("c", "d")]
