"""Links kept apart by scope (engine/state/scoped_links.py): a read follows only the links written
or taught in the scopes whose memories it sees."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.consolidation import Rule
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.recall.chains import find_chains
from assocmem.engine.recall.graph import neighbourhood
from assocmem.engine.recall.links import links_of
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.memory import scope_of
from assocmem.engine.state.scoped_links import VIEWS_KEPT, links_view
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility
from tests.unit.engine.make_events import activity, consolidated, document, feedback, written
from tests.unit.engine.state.test_fold_properties import SCOPES

DAY = 86_400.0
ALICE, BOB = Visibility(user="alice"), Visibility(user="bob")
VISIBILITIES = [
    Visibility(),
    ALICE,
    BOB,
    Visibility(user="alice", session="s1"),
    Visibility(user="alice", session="s2"),
    Visibility(namespace="ops"),
    Visibility(user="alice", namespace="ops"),
]


def about(event: Event, user: str | None = None, namespace: str | None = None) -> Event:
    return dataclasses.replace(event, user=user, namespace=namespace)


def clinic() -> State:
    """Alice's notes link card with diabetes; bob's card with travel; everyone's card with
    checkout."""
    return fold_from_zero(
        [
            about(written(1, ["card", "diabetes"]), "alice"),
            about(written(2, ["card", "diabetes"]), "alice"),
            about(written(3, ["card", "travel"]), "bob"),
            written(4, ["card", "checkout"]),
            written(5, ["diabetes", "insulin"]),
        ]
    )


def folded(state: State, events: list[Event]) -> State:
    assert not fold(state, events)
    return state


def neighbours(state: State, visibility: Visibility, concept: str) -> set[str]:
    edges = neighbourhood(links_view(state, visibility), [concept], 1)
    return {e.target if e.source == concept else e.source for e in edges}


def test_a_users_links_lead_only_that_users_reads() -> None:
    state = clinic()
    assert neighbours(state, ALICE, "card") == {"diabetes", "checkout"}
    assert neighbours(state, BOB, "card") == {"travel", "checkout"}
    assert neighbours(state, Visibility(), "card") == {"checkout"}
    assert neighbours(state, Visibility(everything=True), "card") == {
        "diabetes",
        "travel",
        "checkout",
    }
    # a common memory about diabetes is bob's to see, but not by way of alice's link
    found = recall(
        links_view(state, BOB), Query(("card",), limit=10, visibility=BOB, context=False)
    )
    assert "5-0" not in {item.memory.id for item in found.items}
    found = recall(
        links_view(state, ALICE), Query(("card",), limit=10, visibility=ALICE, context=False)
    )
    assert "5-0" in {item.memory.id for item in found.items}


def test_a_scope_sees_the_whole_count_of_a_link_it_shares_with_others() -> None:
    state = folded(clinic(), [written(6, ["card", "diabetes"])])
    alice, bob = links_view(state, ALICE), links_view(state, BOB)
    i, j = state.concept_index["card"], state.concept_index["diabetes"]
    assert (state.counts.count(i, j), alice.counts.count(i, j), bob.counts.count(i, j)) == (3, 3, 1)


def test_feedback_teaches_the_scope_it_was_given_in() -> None:
    state = folded(clinic(), [about(feedback(6, ["4-0"], 1.0, ["travel"]), "bob")])
    i, j = state.concept_index["travel"], state.concept_index["card"]
    taught = {v: links_view(state, v).learned.get(i, {}).get(j, 0.0) for v in (ALICE, BOB)}
    assert taught == {ALICE: 0.0, BOB: 1.0} and state.learned[i][j] == 1.0
    later = folded(state, [feedback(7, ["4-0"], 1.0, ["travel"])])  # common: everyone's
    taught = {v: links_view(later, v).learned.get(i, {}).get(j, 0.0) for v in (ALICE, BOB)}
    assert taught == {ALICE: 1.0, BOB: 2.0}


def test_consolidation_decays_a_scopes_share_with_the_whole() -> None:
    state = folded(clinic(), [about(feedback(6, ["4-0"], 1.0, ["travel"]), "bob")])
    state = folded(state, [feedback(7, ["4-0"], 1.0, ["travel"])])
    taught_at = 0.007  # the position of the last feedback, 7-0, in seconds
    rule = Rule(
        at=taught_at + 11 * DAY,  # ten days past the one-day window
        window_days=1.0,
        taught_half_life_days=10.0,
        min_cooccurrence=0,
        merge_duplicates=False,
    )
    decayed = folded(state, [consolidated(8, state, rule)])
    i, j = state.concept_index["travel"], state.concept_index["card"]
    assert decayed.learned[i][j] == pytest.approx(1.0)  # 2.0, halved
    taught = {v: links_view(decayed, v).learned.get(i, {}).get(j, 0.0) for v in (ALICE, BOB)}
    assert taught == {ALICE: pytest.approx(0.5), BOB: pytest.approx(1.0)}


def test_a_chain_shows_only_evidence_the_read_may_see() -> None:
    state = folded(clinic(), [about(written(6, ["diabetes", "insulin"]), "alice")])
    view = links_view(state, ALICE)
    chains = find_chains(view, links_of(view), ("card", "insulin"), 0.0)
    assert chains and chains[0].path == ("card", "diabetes", "insulin")
    assert set(chains[0].hops[1].evidence) == {"5-0", "6-0"}
    carol = Visibility(user="carol")
    view = links_view(state, carol)
    assert not find_chains(view, links_of(view), ("card", "insulin"), 0.0)
    folded(state, [written(7, ["card", "diabetes"])])  # now a common link too
    view = links_view(state, carol)
    chains = find_chains(view, links_of(view), ("card", "insulin"), 0.0)
    assert chains[0].hops[0].evidence == ("7-0",)  # not alice's notes 1-0 and 2-0
    everyone = find_chains(state, links_of(state), ("card", "insulin"), 0.0)
    assert everyone[0].path == ("card", "diabetes", "insulin")


def test_a_tenant_without_scopes_reads_its_state_itself() -> None:
    state = fold_from_zero([written(1, ["card", "checkout"]), document(2, [["card", "pin"]])])
    assert links_view(state, ALICE) is state


def test_scoped_shares_survive_a_snapshot() -> None:
    state = folded(
        clinic(),
        [
            about(feedback(6, ["1-0"], 1.0, ["card"]), "alice"),
            about(document(7, [["visa", "card"]]), "bob"),
        ],
    )
    loaded = load_state(dump_state(state))
    assert content_hash(loaded) == content_hash(state)
    assert (
        neighbours(loaded, BOB, "card")
        == neighbours(state, BOB, "card")
        == {
            "travel",
            "checkout",
            "visa",
        }
    )
    assert neighbours(loaded, ALICE, "visa") == set()


def pair_counts(state: State) -> dict[frozenset[str], int]:
    found = {}
    for i, a in enumerate(state.concepts):
        targets, counts = state.counts.row(i)
        for j, n in zip(targets.tolist(), counts.tolist(), strict=True):
            found[frozenset((a, state.concepts[j]))] = n
    return found


@st.composite
def scoped_notes(draw: st.DrawFn) -> list[Event]:
    events = []
    for n in range(1, draw(st.integers(1, 25)) + 1):
        concepts = draw(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=4, unique=True))
        kind = draw(st.sampled_from([written, activity, document]))
        event = kind(n, [concepts, concepts[::-1]] if kind is document else concepts)
        namespace, user, session = draw(SCOPES)
        events.append(dataclasses.replace(event, namespace=namespace, user=user, session=session))
    return events


@given(scoped_notes())
@settings(max_examples=60, deadline=None)
def test_a_scope_sees_exactly_the_links_of_what_it_sees(events: list[Event]) -> None:
    whole = fold_from_zero(events)
    for visibility in VISIBILITIES:
        alone = fold_from_zero([e for e in events if visibility.sees_scope(scope_of(e))])
        assert pair_counts(links_view(whole, visibility)) == pair_counts(alone), visibility


def test_a_state_keeps_a_bounded_number_of_scoped_views() -> None:
    state = fold_from_zero(
        [about(written(n, ["card", f"c{n}"]), f"user{n}") for n in range(1, VIEWS_KEPT + 10)]
    )
    for n in range(1, VIEWS_KEPT + 10):
        view = links_view(state, Visibility(user=f"user{n}"))
        assert neighbours(state, Visibility(user=f"user{n}"), "card") == {f"c{n}"}
        links_of(view)
    kept = [key for key in state.derived if isinstance(key, tuple) and key[0] == "links"]
    assert len(state.derived["scoped_views"]) == VIEWS_KEPT and len(kept) <= VIEWS_KEPT
