"""Filters on reads and listings (engine/recall/filters.py): Mem0's shape, JSON's equality,
clear refusals, and a filtered read that still finds the best memories that pass."""

from __future__ import annotations

import pytest

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.filters import parse_filters
from assocmem.engine.recall.listing import Filter, listed
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.state.visibility import Visibility
from tests.unit.engine.make_events import written


def note(n: int, concepts: list[str], importance: int = 3, **metadata: object):
    event = written(n, concepts, importance=importance)
    if metadata:
        event.data["metadata"] = metadata
    return event


def state_of_tickets():
    events = [
        note(1, ["billing", "timeout"], team="ops", priority=1, resolved=True),
        note(2, ["billing", "timeout"], team="billing", priority=3, resolved=False),
        note(3, ["billing", "retry"], importance=5, team="billing", priority=5),
        note(4, ["billing", "timeout"], ticket="7"),
        note(5, ["billing", "timeout"], ticket=7),
    ]
    events += [note(n, ["billing", "timeout"], team="ops") for n in range(6, 60)]
    return fold_from_zero(events)


def ids(state, spec, **options) -> list[str]:
    query = Query(("billing", "timeout"), limit=100, filters=parse_filters(spec), **options)
    return sorted((i.memory.id for i in recall(state, query).items), key=lambda i: int(i[:-2]))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"team": "billing"}, ["2-0", "3-0"]),
        ({"priority": {"gte": 3}}, ["2-0", "3-0"]),
        ({"priority": {"gt": 1, "lt": 5}}, ["2-0"]),
        ({"team": {"in": ["billing", "nobody"]}, "priority": {"ne": 3}}, ["3-0"]),
        ({"resolved": False}, ["2-0"]),  # false is not 0, nor absent
        ({"ticket": 7}, ["5-0"]),  # 7 is not "7"
        ({"ticket": "7"}, ["4-0"]),
        ({"OR": [{"ticket": 7}, {"resolved": True}]}, ["1-0", "5-0"]),
        ({"AND": [{"team": "billing"}, {"importance": 5}]}, ["3-0"]),
        ({"priority": {"nin": [1, 3]}}, ["3-0"]),  # a memory without the key never matches
    ],
)
def test_a_filtered_read_returns_exactly_the_memories_that_pass(spec, expected) -> None:
    assert ids(state_of_tickets(), spec) == expected


def test_a_filtered_read_finds_the_passing_memory_below_many_better_ones() -> None:
    """54 'ops' notes match the question better; the one 'billing' note with only one of
    its concepts is still found (a filter is not applied to the unfiltered top k)."""
    state = state_of_tickets()
    query = Query(("billing", "timeout"), limit=3, filters=parse_filters({"priority": 5}))
    assert [i.memory.id for i in recall(state, query).items] == ["3-0"]
    fields = Query(("billing",), limit=5, filters=parse_filters({"agent": "someone else"}))
    assert recall(state, fields).items == ()


def test_a_listing_takes_the_same_filters() -> None:
    state = state_of_tickets()
    where = Filter(filters=parse_filters({"team": "billing"}))
    rows = listed(state, Visibility(everything=True), where, None, 10)
    assert [state.rows[r].id for r in rows] == ["3-0", "2-0"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([1], "filters is a list of 1: expected an object of conditions"),
        ({"team": {"like": "o%"}}, "filters.team has operator 'like': expected one of eq, ne"),
        (
            {"priority": {"gte": "high"}},
            "filters.priority.gte is the string 'high': expected a number",
        ),
        (
            {"team": {"in": []}},
            "filters.team.in is a list of 0: expected a list of 1 to 100 values",
        ),
        (
            {"team": ["ops"]},
            "filters.team is a list of 1: expected a string, a number or a boolean",
        ),
        ({"OR": [{"AND": [{"a": 1}]}]}, "filters.OR[0] nests AND: one level of AND / OR"),
        ({"OR": [{"a": 1}], "b": 2}, "filters mixes OR with other keys"),
        ({"ts": "yesterday"}, "filters.ts is the string 'yesterday': ts is a number"),
        ({"a": {"eq": float("nan")}}, "filters.a.eq is nan: expected a finite number"),
    ],
)
def test_a_bad_filter_is_refused_naming_the_part(spec, message) -> None:
    with pytest.raises(InvalidQuery, match="^" + message.replace("[", r"\[").replace("(", r"\(")):
        parse_filters(spec)


def test_no_filter_is_none() -> None:
    assert parse_filters(None) is None and parse_filters({}) is None
