"""Links never cost recall (engine/recall/dominance.py): what links add never takes a memory
past one that carries clearly more of the question; among memories that carry as much,
links decide. The cap's C (engine/recall/_dominance.c) and its numpy are each held to the
rule in words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall import dominance
from assocmem.engine.recall.dominance import (
    EPSILON,
    LACKS_AT_MOST,
    MARGIN,
    bounded_in_c,
    bounded_in_python,
)
from assocmem.engine.recall.rank import contenders, reach
from assocmem.engine.recall.recall import Query, recall
from tests.unit.engine.make_events import feedback, written
from tests.unit.engine.native import skip_unless_c_can_be_built

FILLER = [f"detail{n}" for n in range(6)]
QUARTERS = np.full(4, 0.25)
"""A question of four concepts of equal weight."""


@pytest.fixture(scope="module", params=["c", "python"])
def bounded(request):
    if request.param == "python":
        return bounded_in_python
    pytest.importorskip("assocmem.engine.recall._dominance", reason="the C was not built here")
    return bounded_in_c


def test_the_c_one_is_the_one_used() -> None:
    pytest.importorskip("assocmem.engine.recall._dominance", reason="the C was not built here")
    assert dominance.bounded is bounded_in_c and dominance.NATIVE


def test_the_c_refuses_arrays_that_disagree_in_size() -> None:
    native = pytest.importorskip("assocmem.engine.recall._dominance", reason="not built here")
    full, direct = np.array([0.5, 0.9]), np.array([0.5, 0.2])
    carries = np.array([[True, False], [False, True]])
    with pytest.raises(ValueError, match="disagree in size"):
        native.cap_lifts(full, direct, carries[:1], None, QUARTERS[:2], -np.inf, 0.6, 1e-7, 1e-9)
    with pytest.raises(ValueError, match="disagree in size"):
        native.cap_lifts(full, direct, carries, np.ones(3, bool), QUARTERS[:2], 0.0, 0.6, 0, 0)


def test_it_is_built_wherever_it_can_be() -> None:
    skip_unless_c_can_be_built()
    assert dominance.NATIVE


def nested(cover: list[float]) -> np.ndarray:
    """Per memory, the first `cover` x 4 of four equal concepts: nested parts."""
    return np.array([[k < round(c * 4) for k in range(4)] for c in cover])


def notes() -> list[list[str]]:
    """'ledger' and 'audit' are asked; 'books' is written with 'audit' again and again."""
    found = [["audit", "books"] for _ in range(6)]
    found += [["ledger", "audit", *FILLER]]  # 7: carries the whole question, and more
    found += [["ledger", "books"]]  # 8: carries half, and a concept linked to the rest
    found += [["ledger", "misc"]]  # 9: carries half, nothing linked
    found += [["books", "shelf"]]  # 10: carries none, linked to 'audit'
    found += [[f"other{n}", f"word{n}"] for n in range(30)]
    return found


@pytest.mark.parametrize("depth", ["standard", "deep"])
def test_a_memory_carrying_the_whole_question_is_never_passed_through_links(depth) -> None:
    """8 carries 'ledger' and 'books', linked to 'audit': as strong as 7 or stronger if links
    counted as carrying (they did), but 7 carries the whole question."""
    state = fold_from_zero([written(n + 1, c) for n, c in enumerate(notes())])
    fast = recall(state, Query(("ledger", "audit"), depth="fast")).items
    assert fast[0].memory.id == "7-0"
    ranked = [i.memory.id for i in recall(state, Query(("ledger", "audit"), depth=depth)).items]
    assert ranked[0] == "7-0"
    assert ranked.index("8-0") < ranked.index("10-0")  # links still add and reorder below it


def test_links_reorder_memories_that_carry_as_much_of_the_question() -> None:
    """8 and 9 each carry 'ledger'; 8 also a concept linked to 'audit', so it comes first,
    though 9 is newer (and first without links)."""
    state = fold_from_zero([written(n + 1, c) for n, c in enumerate(notes())])
    fast = [i.memory.id for i in recall(state, Query(("ledger", "audit"), depth="fast")).items]
    assert fast.index("9-0") < fast.index("8-0")
    items = recall(state, Query(("ledger", "audit"))).items
    ranked = [i.memory.id for i in items]
    assert ranked.index("8-0") < ranked.index("9-0")


def test_bounded_caps_a_lift_just_below_the_memory_it_may_not_pass(bounded) -> None:
    full = np.array([0.30, 0.90, 0.70, 0.40])
    direct = np.array([0.30, 0.20, 0.20, 0.10])
    carries = nested([1.0, 0.25, 0.5, 0.5])
    capped = bounded(full, direct, carries, QUARTERS)
    assert capped[0] == 0.30
    assert 0.20 <= capped[1] < 0.30  # a quarter of the question vs all of it: stays below
    assert capped[2] < 0.30
    assert capped[3] == pytest.approx(0.30 - 1e-7)
    # the halves carry the quarter and more: lifted, it stays below the one at its direct
    # score; a half lifted past the other, which carries as much, is links reordering them
    assert bounded(full[1:], direct[1:], carries[1:], QUARTERS).tolist() == [0.20, 0.70, 0.40]


def test_a_memory_carrying_another_part_and_links_does_not_pass_one_carrying_clearly_more(bounded):
    """Asked 'what did Karthik say about 0e358de64a on 2025-05-19 wherein', the commit written
    that day, carrying the name and linked to the rest, passed the one that carries the name
    and both rare words (`quality.py`'s known-item questions, before)."""
    weights = np.array([0.17, 0.26, 0.27, 0.30])  # karthik, 0e358de64a, wherein, the date
    carries = np.array([[1, 1, 1, 0], [1, 0, 0, 1]], dtype=bool)
    full = np.array([0.25, 0.30])
    direct = np.array([0.25, 0.07])
    assert bounded(full, direct, carries, weights)[1] < 0.25


def test_memories_each_carrying_a_part_none_clearly_more_are_near_ties_links_reorder(bounded):
    """One carries 0.4 of the question, the other 0.3 and is linked to the rest: the first
    carries most of what the second lacks, but lacks more than LACKS_AT_MOST of it itself."""
    weights = np.array([0.3, 0.3, 0.4])
    carries = np.array([[0, 0, 1], [1, 0, 0]], dtype=bool)
    assert 1 - 0.4 > LACKS_AT_MOST * 0.7
    full, direct = np.array([0.30, 0.45]), np.array([0.30, 0.20])
    assert bounded(full, direct, carries, weights).tolist() == full.tolist()


def test_a_memory_carrying_a_part_and_more_is_not_passed_by_one_carrying_the_part_alone(
    bounded,
):
    """Asked "The `--trust-exit-code` option for git-diff-tool(1) was introduced via .", the
    answer was passed by memories carrying less of the question and linked to the rest (bench
    quality.py's described questions): one carrying a common word and a rare one stays above
    one carrying the common word alone, though the rare word is under half of what that one
    lacks and the two would be near-ties by weight."""
    weights = np.array([0.10, 0.20, 0.35, 0.35])
    carries = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]], dtype=bool)
    assert 0.20 < (1 - 0.10) / 2  # what the first carries of the second's lack
    full = np.array([0.30, 0.60, 0.60])
    direct = np.array([0.30, 0.10, 0.20])
    capped = bounded(full, direct, carries, weights)
    assert 0.10 <= capped[1] < 0.30
    assert capped[2] == 0.60  # one carrying another part: near-ties links reorder


def subject_notes() -> list[list[str]]:
    """A paragraph about 'passiflora' whose sentences name it once: 1 says where it grows, 2
    what its root is for; 'distribution' is common, 'emetic' is not."""
    found = [["passiflora", "leaf", "vine"], ["distribution", "america"], ["root", "emetic"]]
    found += [["distribution", f"species{n}"] for n in range(6)]
    found += [[f"other{n}", f"word{n}"] for n in range(30)]
    return found


def test_a_rated_memory_is_not_the_answer_to_every_later_question_on_its_subject() -> None:
    """Rated for ('passiflora', 'root'), 3 is taught a link passiflora -> emetic: asked again,
    it comes first; asked where passiflora grows, the memory that carries 'distribution'
    stays above it, though 3 is linked to the rarer word and 2 carries only the common one."""
    events = [written(n + 1, c) for n, c in enumerate(subject_notes())]
    events.append(feedback(len(events) + 1, ["3-0"], 1.0, ["passiflora", "root"]))
    state = fold_from_zero(events)
    again = recall(state, Query(("passiflora", "root"))).items
    assert again[0].memory.id == "3-0"
    items = recall(state, Query(("passiflora", "distribution"))).items
    ranked = [i.memory.id for i in items]
    assert "3-0" in ranked, "the taught association still comes"
    assert ranked.index("2-0") < ranked.index("3-0")
    assert all(ranked.index(m) < ranked.index("3-0") for m in ("1-0", "4-0", "5-0"))


def test_bounded_keeps_a_memory_only_a_taught_link_found_below_any_that_carries_some(
    bounded,
) -> None:
    full = np.array([0.10, 0.60, 0.60])
    direct = np.array([0.10, 0.0, 0.0])
    weights = np.array([0.2, 0.8])
    carries = np.array([[1, 0], [0, 0], [0, 0]], dtype=bool)
    taught = np.array([False, True, False])
    capped = bounded(full, direct, carries, weights, taught)
    assert capped[1] < 0.10  # found through a taught link: below what carries a fifth
    assert capped[2] == 0.60  # through a written one: may pass a memory carrying so little


def test_bounded_leaves_scores_below_the_floor_as_they_are(bounded) -> None:
    full = np.array([0.30, 0.90, 0.25])
    direct = np.array([0.30, 0.20, 0.05])
    carries = nested([1.0, 0.5, 0.5])
    capped = bounded(full, direct, carries, QUARTERS, floor=0.28)
    assert capped[1] < 0.30  # could reach the list: capped below the memory carrying all
    assert capped[2] == 0.25  # could not: left, though it would be capped too


def memories(width: int) -> st.SearchStrategy:
    """(direct, lift, which of the question's `width` concepts it carries, taught) each."""
    return st.lists(
        st.tuples(
            st.floats(0.0, 1.0),
            st.one_of(st.just(0.0), st.floats(0.0, 1.0)),  # not lifted, or lifted by up to 1
            st.tuples(*[st.booleans()] * width),
            st.booleans(),
        ),
        min_size=1,
        max_size=40,
    )


def shares(width: int) -> st.SearchStrategy:
    """Each concept's share of the question's weight."""
    return st.lists(st.floats(0.05, 1.0), min_size=width, max_size=width).map(
        lambda w: np.array(w) / sum(w)
    )


# a short question, and long ones (their memories' sets of concepts are told apart otherwise)
QUESTIONS = st.sampled_from([4, 20, 70]).flatmap(lambda k: st.tuples(memories(k), shares(k)))


def scored(memories: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(direct, lift, carries, taught) per memory -> full, direct, carries, taught arrays."""
    direct = np.array([d for d, _, _, _ in memories])
    full = direct + np.array([lift for _, lift, _, _ in memories])
    carries = np.array([c for _, _, c, _ in memories], dtype=bool)
    return full, direct, carries, np.array([t for _, _, _, t in memories])


def keeps_its_place(upper: np.ndarray, lower: np.ndarray, weights: np.ndarray, rated: bool) -> bool:
    """The rule in words, for two memories' concepts: the upper one carries more than half
    of what the lower one lacks, and lacks less than LACKS_AT_MOST of it itself, or it
    carries every concept the lower one carries (some) and more; above one a taught link
    found (`rated`), it lacks less than half of what that one lacks."""
    lacked = sum(w for w, c in zip(weights, lower, strict=True) if not c)
    held = sum(w for w, c, u in zip(weights, lower, upper, strict=True) if u and not c)
    own_lack = sum(w for w, u in zip(weights, upper, strict=True) if not u)
    if rated:
        return lacked / 2 - own_lack > EPSILON
    mine, theirs = set(np.flatnonzero(upper)), set(np.flatnonzero(lower))
    if theirs and theirs < mine:
        return True
    return held - lacked / 2 > EPSILON and LACKS_AT_MOST * lacked - own_lack > EPSILON


@settings(max_examples=300, deadline=None)
@given(QUESTIONS)
def test_bounded_caps_each_lift_below_the_lowest_memory_that_keeps_its_place(
    bounded, question
) -> None:
    """The rule the module states, memory by memory: a lift stops just below the lowest
    memory at or above its direct score that keeps its place above it (any that carries
    some of the question, for one carrying none that a taught link found)."""
    memories, weights = question
    full, direct, carries, taught = scored(memories)
    capped = bounded(full, direct, carries, weights, taught)
    for n in range(len(memories)):
        only_taught = taught[n] and not carries[n].any()
        above = [
            direct[u]
            for u in range(len(memories))
            if direct[u] >= direct[n]
            and (
                carries[u].any()
                if only_taught
                else keeps_its_place(carries[u], carries[n], weights, taught[n])
            )
        ]
        expected = min(full[n], max(direct[n], min(above, default=np.inf) - MARGIN))
        assert capped[n] == (expected if full[n] > direct[n] else full[n])


@settings(max_examples=300, deadline=None)
@given(QUESTIONS, st.integers(1, 8))
def test_capping_only_what_could_reach_the_list_changes_no_read(bounded, question, limit) -> None:
    """recall caps only the scores its direct scores leave a chance (floor=reach(direct)):
    the memories that can reach the list, and their scores, are those of capping them all."""
    memories, weights = question
    full, direct, carries, taught = scored(memories)
    every = bounded(full, direct, carries, weights, taught)
    some = bounded(full, direct, carries, weights, taught, floor=reach(direct, limit))
    assert contenders(every, limit).tolist() == contenders(some, limit).tolist()
    near = contenders(every, limit)
    assert every[near].tolist() == some[near].tolist()
