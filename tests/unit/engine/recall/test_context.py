"""Episodic context (engine/recall/context.py): the memory written just after a strong match
in its stream (or just before it, if about the same thing) comes with the match, saying
which, and never displaces a memory that matched better than that share of the match."""

from __future__ import annotations

import dataclasses

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.position import Position
from assocmem.engine.recall.context import (
    FOLLOWING_SHARE,
    PRECEDING_SHARE,
    RELATED,
    taught_share,
)
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.stream import CONTEXT_GAP
from tests.unit.engine.make_events import feedback, written


def by_id(result):
    return {item.memory.id: item for item in result.items}


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


def test_the_next_turn_on_the_same_subject_comes_stronger_than_one_on_another() -> None:
    """The seat shares nothing with the flight it follows: FOLLOWING_SHARE of its score. A
    reply that names Lisbon again, with no word of the question, is about the same thing:
    RELATED times that."""
    events = conversation()
    events[1] = dataclasses.replace(
        written(2, ["lisbon", "tram", "ticket"], "a tram ticket in Lisbon"), ts=1060.0
    )
    items = recall(fold_from_zero(events), Query(("flight", "booked"), limit=3)).items
    match, reply = items[0], items[1]
    assert (match.memory.id, reply.memory.id, reply.source) == ("1-0", "2-0", "context")
    assert reply.score == round(match.score * FOLLOWING_SHARE * RELATED, 6)
    assert RELATED > 1 and FOLLOWING_SHARE * RELATED < 1


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
    assert before.score == round(items["3-0"].score * PRECEDING_SHARE * RELATED, 6)


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


def test_rating_the_turn_after_a_match_teaches_their_link_and_the_read_follows_it() -> None:
    """Feedback on a neighbour strengthens that memory-to-memory link: folded from the log,
    kept by a snapshot, shown on the item; unhelpful ratings unlearn it."""
    asked = Query(("lisbon",), limit=3)  # the match again, by a word the rating did not name
    before = fold_from_zero(conversation())
    state = fold_from_zero([*conversation(), feedback(10, ["2-0"], 1.0, ["flight"])])
    assert state.memory_links == {(0, 1): (1.0, Position(10, 0))}
    reply = by_id(recall(state, asked))["2-0"]
    match = by_id(recall(state, asked))["1-0"]
    assert (reply.source, reply.beside, reply.taught) == ("context", "1-0", 1.0)
    assert reply.score == round(match.score * taught_share(FOLLOWING_SHARE, 1.0), 6)
    assert reply.score > by_id(recall(before, asked))["2-0"].score
    loaded = load_state(dump_state(state))
    assert loaded.memory_links == state.memory_links
    assert content_hash(loaded) == content_hash(state) != content_hash(before)
    assert recall(loaded, asked).items == recall(state, asked).items

    taken_back = fold_from_zero(
        [
            *conversation(),
            feedback(10, ["2-0"], 1.0, ["flight"]),
            feedback(11, ["2-0"], -1.0, ["flight"]),
        ]
    )
    assert taken_back.memory_links[(0, 1)][0] == 0.0
    reply, match = by_id(recall(taken_back, asked))["2-0"], by_id(recall(taken_back, asked))["1-0"]
    assert reply.score == round(match.score * FOLLOWING_SHARE, 6)  # as before any rating


def test_unhelpful_ratings_take_back_what_was_taught_never_the_contiguity_itself() -> None:
    """One answer that did not help a question is no evidence that two memories written one
    after the other are unrelated for every other question: on the CMRC feedback protocol with
    unhelpful ratings, unlearning it cost held-out questions recall and the rated ones gained
    nothing (bench/README.md)."""
    asked = Query(("lisbon",), limit=3)
    unhelpful = [feedback(10 + n, ["2-0"], -1.0, ["flight"]) for n in range(2)]
    state = fold_from_zero([*conversation(), *unhelpful])
    assert state.memory_links[(0, 1)][0] == 0.0
    reply = by_id(recall(state, asked))["2-0"]
    assert (reply.source, reply.beside) == ("context", "1-0")


def test_a_rating_teaches_only_the_link_from_a_neighbour_the_question_matches() -> None:
    state = fold_from_zero([*conversation(), feedback(10, ["2-0"], 1.0, ["alfama"])])
    assert state.memory_links == {(2, 1): (1.0, Position(10, 0))}  # the hotel turn, after
    state = fold_from_zero([*conversation(), feedback(10, ["2-0"], 1.0, ["unrelated"])])
    assert state.memory_links == {}


def test_a_taught_link_brings_the_turn_before_a_match_though_they_share_no_concept() -> None:
    asked = Query(("alfama",), limit=3)
    assert "2-0" not in by_id(recall(fold_from_zero(conversation()), asked))
    state = fold_from_zero([*conversation(), feedback(10, ["2-0"], 1.0, ["hotel"])])
    seat = by_id(recall(state, asked))["2-0"]
    assert (seat.source, seat.beside, seat.after, seat.taught) == ("context", "3-0", False, 1.0)
