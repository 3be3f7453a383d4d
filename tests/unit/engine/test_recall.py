from __future__ import annotations

import pytest

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.fold import fold_from_zero
from assocmem.engine.recall import Query, recall

from .events import acceptance_notes, feedback


def by_id(result):
    return {item.memory.id: item for item in result.items}


def test_read_reaches_a_note_that_never_names_the_query_and_says_which_link() -> None:
    result = recall(fold_from_zero(acceptance_notes()), Query(("a",)))
    items = by_id(result)
    assert {i for i, item in items.items() if item.source == "direct"} == {"1-0", "2-0", "5-0"}
    bc = items["3-0"]
    assert bc.source == "association"
    assert [(v.source, v.concept, v.weight, v.count) for v in bc.via] == [("a", "b", 2.0, 2)]
    assert result.expanded_concepts == {"b": 2.0}


def test_link_below_the_floor_is_not_followed() -> None:
    items = by_id(recall(fold_from_zero(acceptance_notes()), Query(("a",))))
    assert "6-0" not in items  # e-g note: a-e was written once, floor is 2
    assert "4-0" not in items  # c-d note: two steps away


def test_floor_zero_follows_every_written_link() -> None:
    items = by_id(recall(fold_from_zero(acceptance_notes()), Query(("a",), floor=1)))
    assert items["6-0"].via[0].concept == "e"


def test_helpful_feedback_teaches_a_link_no_note_wrote() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 1.0, ["a"])])
    result = recall(state, Query(("a",)))
    assert result.expanded_concepts == {"b": 3.0, "c": 1.0}
    cd = by_id(result)["4-0"]
    assert cd.source == "association"
    assert [(v.concept, v.count, v.learned) for v in cd.via] == [("c", 0, 1.0)]


def test_unhelpful_feedback_drops_a_written_link_below_the_floor() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], -1.0, ["a"])])
    result = recall(state, Query(("a",)))
    assert "b" not in result.expanded_concepts
    assert "3-0" not in by_id(result)


def test_direct_hits_rank_above_associations() -> None:
    result = recall(fold_from_zero(acceptance_notes()), Query(("a",)))
    sources = [item.source for item in result.items]
    assert sources == sorted(sources, key=lambda s: s != "direct")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"concepts": ()}, "concepts is empty"),
        ({"concepts": ("a",), "limit": 0}, "limit 0"),
        ({"concepts": ("a",), "floor": -1}, "floor -1"),
    ],
)
def test_bad_query_is_refused_with_the_field_named(kwargs, message) -> None:
    with pytest.raises(InvalidQuery, match=message):
        Query(**kwargs)


def test_expansion_keeps_only_the_strongest_links() -> None:
    from assocmem.engine.recall import MAX_EXPANSION

    from .events import written

    events = [
        written(n * 100 + k, ["hub", f"n{n:02d}"])
        for n in range(MAX_EXPANSION + 4)
        for k in range(n + 2)
    ]
    events.sort(key=lambda e: int(e.position.split("-")[0]))
    result = recall(fold_from_zero(events), Query(("hub",)))
    assert len(result.expanded_concepts) == MAX_EXPANSION
    assert min(result.expanded_concepts.values()) == 6.0  # n04 (6 notes) .. n19 (21 notes)
