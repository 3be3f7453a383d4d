from __future__ import annotations

import dataclasses

import pytest

from assocmem.engine.errors import InvalidQuery
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.recall import Query, TimeRange, recall
from tests.unit.engine.make_events import acceptance_notes, feedback, written


def by_id(result):
    return {item.memory.id: item for item in result.items}


def test_read_reaches_a_note_that_never_names_the_query_and_says_which_link() -> None:
    result = recall(fold_from_zero(acceptance_notes()), Query(("a",)))
    items = by_id(result)
    assert {i for i, item in items.items() if item.source == "direct"} == {"1-0", "2-0", "5-0"}
    bc = items["3-0"]
    assert bc.source == "association"
    assert [(v.source, v.concept, v.weight, v.count) for v in bc.via] == [("a", "b", 2.0, 2)]
    assert list(result.expanded_concepts) == ["b"]
    assert bc.via[0].strength == bc.via[0].ppmi > 0


def test_link_below_the_floor_is_not_followed() -> None:
    items = by_id(recall(fold_from_zero(acceptance_notes()), Query(("a",), context=False)))
    assert "6-0" not in items  # e-g note: a-e was written once, floor is 2
    assert "4-0" not in items  # c-d note: two steps away


def test_floor_zero_follows_every_written_link() -> None:
    items = by_id(recall(fold_from_zero(acceptance_notes()), Query(("a",), floor=1)))
    assert items["6-0"].via[0].concept == "e"


def test_helpful_feedback_teaches_a_link_no_note_wrote() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], 1.0, ["a"])])
    result = recall(state, Query(("a",)))
    assert set(result.expanded_concepts) == {"b", "c"}
    cd = by_id(result)["4-0"]
    assert cd.source == "association"
    assert [(v.concept, v.count, v.learned, v.ppmi) for v in cd.via] == [("c", 0, 1.0, 0.0)]
    assert cd.via[0].strength > 0  # no written PPMI: the taught pseudo-counts alone


def test_unhelpful_feedback_drops_a_written_link_below_the_floor() -> None:
    state = fold_from_zero([*acceptance_notes(), feedback(7, ["3-0"], -1.0, ["a"])])
    result = recall(state, Query(("a",), context=False))
    assert "b" not in result.expanded_concepts
    assert "3-0" not in by_id(result)


def test_direct_hits_rank_above_associations() -> None:
    result = recall(fold_from_zero(acceptance_notes()), Query(("a",)))
    sources = [item.source for item in result.items]
    assert sources == sorted(sources, key=lambda s: s != "direct")


def test_two_strong_links_outrank_a_match_of_a_common_word_only() -> None:
    """One scoring space: 'ana' is in almost every note (a speaker's name), 'adoption' in two.
    A note carrying two concepts strongly linked to 'adoption' beats the notes that match
    'ana' only, though it never names either."""
    notes = [["ana", f"chat{n}"] for n in range(20)]
    notes += [["adoption", "agency", "family"], ["adoption", "agency", "family"]]
    notes += [["agency", "family", "dream"]]
    state = fold_from_zero([written(n + 1, c) for n, c in enumerate(notes)])
    items = recall(state, Query(("ana", "adoption"))).items
    assert [i.memory.id for i in items[:2]] == ["22-0", "21-0"]  # carry adoption: newest first
    assert (items[2].memory.id, items[2].source) == ("23-0", "association")
    assert {(v.source, v.concept) for v in items[2].via} == {
        ("adoption", "agency"),
        ("adoption", "family"),
    }
    assert all(i.matched == ("ana",) for i in items[3:])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"concepts": ()}, "concepts is empty"),
        ({"concepts": ("a",), "limit": 0}, "limit 0"),
        ({"concepts": ("a",), "floor": -1}, "floor -1"),
        ({"concepts": ("a",), "time_hint": TimeRange(5.0, 5.0)}, "time hint is empty"),
    ],
)
def test_bad_query_is_refused_with_the_field_named(kwargs, message) -> None:
    with pytest.raises(InvalidQuery, match=message):
        Query(**kwargs)


def test_expansion_keeps_only_the_strongest_links() -> None:
    from assocmem.engine.recall.recall import MAX_EXPANSION
    from tests.unit.engine.make_events import written

    events = [
        written(n * 100 + k, ["hub", f"n{n:02d}"])
        for n in range(MAX_EXPANSION + 4)
        for k in range(n + 2)
    ]
    events.sort(key=lambda e: e.position)
    result = recall(fold_from_zero(events), Query(("hub",)))
    assert set(result.expanded_concepts) == {f"n{n:02d}" for n in range(4, MAX_EXPANSION + 4)}


def test_fast_depth_follows_no_link() -> None:
    state = fold_from_zero(acceptance_notes())
    standard = by_id(recall(state, Query(("a",), depth="standard")))
    fast = recall(state, Query(("a",), depth="fast"))
    assert standard["3-0"].source == "association"
    assert "3-0" not in by_id(fast)
    assert fast.expanded_concepts == {}


def test_near_miss_concept_is_found_as_fuzzy_and_ranks_below_exact() -> None:
    state = fold_from_zero([written(1, ["timeout", "retry"]), written(2, ["timeouts", "x"])])
    result = recall(state, Query(("timeout",), depth="fast"))
    assert [(i.memory.id, i.source) for i in result.items] == [("1-0", "direct")]
    typo = recall(state, Query(("timeuot",), depth="fast"))
    assert [(i.memory.id, i.source, i.matched) for i in typo.items][0] == (
        "1-0",
        "fuzzy",
        ("timeout",),
    )


def test_deep_read_reaches_two_steps_and_returns_the_chain_between_query_concepts() -> None:
    notes = [["a", "b"], ["a", "b"], ["b", "c"], ["b", "c"], ["c", "d"], ["c", "d"], ["x", "y"]]
    state = fold_from_zero([written(i + 1, p) for i, p in enumerate(notes)])
    standard = by_id(recall(state, Query(("a",), depth="standard")))
    deep = recall(state, Query(("a",), depth="deep"))
    assert "5-0" not in standard  # c-d notes: two steps from a
    items = by_id(deep)
    assert items["3-0"].source == "association"
    chain_item = items["5-0"]
    assert chain_item.source == "chain"
    assert chain_item.chain.path == ("a", "b", "c")
    assert "7-0" not in items
    between = recall(state, Query(("a", "d"), depth="deep")).chains
    assert [c.path for c in between] == [("a", "b", "c", "d")]
    assert between[0].hidden == ("b", "c")
    assert between[0].hops[0].evidence == ("2-0", "1-0")


def test_a_strong_old_match_outranks_a_weak_new_one() -> None:
    day = 86_400.0
    old = dataclasses.replace(written(1, ["invoice", "tax", "vat"], importance=1), ts=0.0)
    fresh = [
        dataclasses.replace(written(n, ["invoice", f"misc{n}"], importance=5), ts=3000 * day)
        for n in range(2, 40)
    ]
    state = fold_from_zero([old, *fresh])  # now = the newest memory: the old one is 8 years old
    result = recall(state, Query(("invoice", "tax", "vat"), depth="fast"))
    assert result.items[0].memory.id == "1-0"


def test_a_rated_memory_does_not_enter_a_read_it_does_not_match() -> None:
    notes = [written(1, ["deploy", "staging"]), written(2, ["invoice", "tax"])]
    rated = [feedback(3 + n, ["2-0"], 1.0, ["invoice"]) for n in range(5)]
    state = fold_from_zero([*notes, *rated])
    assert state.memories["2-0"].valence > 0.9
    assert by_rank(recall(state, Query(("deploy",), context=False))) == ["1-0"]


def test_unhelpful_feedback_lowers_a_good_match_without_hiding_it() -> None:
    notes = [written(1, ["deploy", "staging"]), written(2, ["deploy", "staging"])]
    state = fold_from_zero([*notes, feedback(3, ["2-0"], -1.0, ["deploy"])])
    assert by_rank(recall(state, Query(("deploy", "staging")))) == ["1-0", "2-0"]


def test_a_time_range_ranks_first_but_never_empties_the_answer() -> None:
    from assocmem.engine.recall.recall import TimeRange

    day = 86_400.0
    launch = dataclasses.replace(written(1, ["launch", "rocket"]), ts=100 * day)
    about = dataclasses.replace(written(2, ["launch", "2008", "satellite"]), ts=300 * day)
    inside = dataclasses.replace(written(3, ["lunch", "menu"]), ts=10 * day)
    state = fold_from_zero([launch, about, inside])
    year_2008 = TimeRange(0.0, 50 * day)  # no launch was written in it
    result = recall(state, Query(("launch",), time_range=year_2008, time_concepts=("2008",)))
    assert [(i.memory.id, i.source) for i in result.items] == [
        ("2-0", "direct"),  # about 2008: it names the year
        ("1-0", "direct"),  # written at another time, still a match
        ("3-0", "time"),  # in the range, matching nothing else
    ]


def test_links_do_not_lift_a_memory_past_one_written_on_the_date_the_question_names() -> None:
    """A date too unsure to apply as a range (Query.time_hint) still says when: the memory
    written that day carries it. Notes linked to the date only through their author's name
    ("ann", "vance": the two notes that carry the date are hers) then stay below the one
    written that day that carries the rest of the question. (They carry only part of what
    it carries, so they would stay below it without the date as well.)"""
    day = 86_400.0
    coc = [written(n, ["ann", "vance", "coc", "2019-09-24", "update"]) for n in (1, 2)]
    hers = [written(n, ["ann", "vance", "add", "code", f"topic{n}"]) for n in range(3, 9)]
    words = ["code"] * 20 + ["conduct"] * 20 + ["add"] * 20
    common = [written(n, [word, f"filler{n}"]) for n, word in enumerate(words, start=9)]
    answer = written(69, ["add", "code", "conduct", "jeff"])
    events = [dataclasses.replace(e, ts=500 * day + e.ts) for e in [*coc, *hers, *common]]
    state = fold_from_zero([*events, dataclasses.replace(answer, ts=100 * day)])
    query = Query(("add", "code", "conduct", "2019-09-24"), time_concepts=("2019-09-24",))

    def ranked(hint):
        result = recall(state, dataclasses.replace(query, time_hint=hint, limit=3))
        return [i.memory.id for i in result.items]

    # without the date too: hers carry a part of what it carries (engine/recall/dominance.py)
    assert ranked(None)[2] == "69-0"
    assert ranked(TimeRange(100 * day, 101 * day)) == ["2-0", "1-0", "69-0"]


def test_old_relevant_memory_outranks_new_irrelevant_one() -> None:
    day = 86_400.0
    old = written(1, ["invoice", "tax"], importance=1)
    old = dataclasses.replace(old, ts=0.0)
    fresh = [dataclasses.replace(written(n, ["invoice", f"misc{n}"]), ts=400 * day) for n in (2, 3)]
    state = fold_from_zero([old, *fresh])
    result = recall(state, Query(("invoice", "tax"), depth="fast", now=400 * day))
    assert result.items[0].memory.id == "1-0"


def test_among_equal_matches_the_newer_and_the_more_accessed_rank_first() -> None:
    day = 86_400.0
    a = dataclasses.replace(written(1, ["deploy", "k8s"]), ts=0.0)
    b = dataclasses.replace(written(2, ["deploy", "k8s"]), ts=100 * day)
    query = Query(("deploy",), depth="fast", now=100 * day)
    assert by_rank(recall(fold_from_zero([a, b]), query)) == ["2-0", "1-0"]
    accessed = accessed_event(3, ["1-0"], [50])
    assert by_rank(recall(fold_from_zero([a, b, accessed]), query)) == ["1-0", "2-0"]


def test_superseded_memory_is_hidden_unless_history_is_asked() -> None:
    old = written(1, ["wifi", "password"])
    new = written(2, ["wifi", "password"])
    new.data["supersedes"] = ["1-0"]
    state = fold_from_zero([old, new])
    assert by_rank(recall(state, Query(("wifi",)))) == ["2-0"]
    assert set(by_rank(recall(state, Query(("wifi",), history=True)))) == {"1-0", "2-0"}


def test_time_range_keeps_memories_inside_it_and_adds_unmatched_ones_as_time() -> None:
    from assocmem.engine.recall.recall import TimeRange

    events = [
        dataclasses.replace(written(n, [f"c{n}", "common"]), ts=float(n)) for n in range(1, 6)
    ]
    state = fold_from_zero(events)
    result = recall(state, Query(("c2",), time_range=TimeRange(2.0, 4.0), context=False))
    assert [(i.memory.id, i.source) for i in result.items][0] == ("2-0", "direct")
    assert {i.memory.id for i in result.items} == {"2-0", "3-0"}
    assert by_id(result)["3-0"].source in ("association", "time")


def by_rank(result):
    return [item.memory.id for item in result.items]


def accessed_event(n, ids, hits):
    from assocmem.engine.events.envelope import Event
    from assocmem.engine.position import Position

    data = {"memory_ids": ids, "hits": hits}
    return Event("memory.accessed", "t", "agent", float(n), data, position=Position(n, 0))


def test_kinds_keep_only_memories_or_only_activity_entries() -> None:
    from tests.unit.engine.make_events import activity

    state = fold_from_zero([written(1, ["deploy", "x"]), activity(2, ["deploy", "y"])])
    assert by_rank(recall(state, Query(("deploy",), kinds=("activity",)))) == ["2-0"]
    assert by_rank(recall(state, Query(("deploy",), kinds=("memory",)))) == ["1-0"]
    assert set(by_rank(recall(state, Query(("deploy",))))) == {"1-0", "2-0"}
