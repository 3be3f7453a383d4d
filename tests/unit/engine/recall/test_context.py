"""Episodic context (engine/recall/context.py): the memory written just after a strong match
in its stream (or just before it, if about the same thing) comes with the match, saying
which, and never displaces a memory that matched better than that share of the match."""

from __future__ import annotations

import dataclasses

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.context import CONTEXT_GAP, FOLLOWING_SHARE, PRECEDING_SHARE
from assocmem.engine.recall.recall import Query, recall
from tests.unit.engine.make_events import written

TURNS = [  # one conversation: the reply to a question shares no word with it
    (["flight", "lisbon", "booked"], "I booked the flight to Lisbon"),
    (["seat", "window", "aisle"], "window seat, row 12"),
    (["hotel", "alfama"], "the hotel is in Alfama"),
]


def conversation(start: int = 1, ts: float = 1000.0, **scope: str) -> list[Event]:
    return [
        dataclasses.replace(written(start + n, concepts, text), ts=ts + 60.0 * n, **scope)
        for n, (concepts, text) in enumerate(TURNS)
    ]


def test_the_turn_after_a_strong_match_comes_as_context_beside_it() -> None:
    state = fold_from_zero(conversation())
    items = recall(state, Query(("flight", "lisbon"), limit=3)).items
    assert [(i.memory.id, i.source) for i in items[:2]] == [("1-0", "direct"), ("2-0", "context")]
    match, following = items[0], items[1]
    assert following.beside == "1-0" and following.after
    assert following.score == round(match.score * FOLLOWING_SHARE, 6)


def test_the_turn_before_comes_weaker_and_only_if_it_is_about_the_same_thing() -> None:
    """What precedes a match is the turn it answers only if they share a key concept; an
    unrelated note written before it is not."""
    state = fold_from_zero(conversation())
    found = {i.memory.id for i in recall(state, Query(("hotel",), limit=3)).items}
    assert "2-0" not in found  # the seat shares nothing with the hotel
    events = conversation()
    events[2] = dataclasses.replace(
        written(3, ["hotel", "seat"], "a seat at the hotel bar"), ts=1120.0
    )
    state = fold_from_zero(events)
    items = {i.memory.id: i for i in recall(state, Query(("hotel",), limit=3)).items}
    before = items["2-0"]
    assert before.source == "context" and before.beside == "3-0" and not before.after
    assert before.score == round(items["3-0"].score * PRECEDING_SHARE, 6)


def test_only_a_neighbour_of_the_same_stream_within_the_gap_comes() -> None:
    other_agent = conversation()
    other_agent[1] = dataclasses.replace(other_agent[1], agent="someone else")
    other_session = conversation()
    other_session[1] = dataclasses.replace(other_session[1], session="another")
    later = conversation()
    later[1] = dataclasses.replace(later[1], ts=later[0].ts + CONTEXT_GAP + 1)
    for events in (other_agent, other_session, later):
        found = [i.memory.id for i in recall(fold_from_zero(events), Query(("flight",))).items]
        assert "2-0" not in found, events[1]


def test_a_fast_read_or_one_that_asks_for_no_context_brings_none() -> None:
    state = fold_from_zero(conversation())
    for query in (Query(("flight",), depth="fast"), Query(("flight",), context=False)):
        assert [i.memory.id for i in recall(state, query).items] == ["1-0"]


def test_context_never_displaces_a_memory_that_matched_better_than_its_share() -> None:
    """Ten memories carrying the whole question match about as well as the strongest: its
    neighbour is not among the ten. Ten that carry its common word only match less than
    half as well: the neighbour comes before them."""
    for carried, neighbour_comes in ((["flight", "lisbon"], False), (["flight"], True)):
        matches = [written(n, [*carried, f"detail{n}"]) for n in range(10, 20)]
        events = conversation() + [dataclasses.replace(e, ts=10_000.0 + e.ts) for e in matches]
        items = recall(fold_from_zero(events), Query(("flight", "lisbon"), limit=10)).items
        assert ("2-0" in {i.memory.id for i in items}) == neighbour_comes, carried
        assert [i.source for i in items].count("direct") == 10 - neighbour_comes
