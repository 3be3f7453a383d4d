"""Sleep consolidation: old written links weigh less, taught links fade slower, weak concepts
lose their links (not their memories), duplicates merge, and the fold reproduces it all."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.consolidation import DAY, Rule, _words, decide
from assocmem.engine.events.envelope import Event, upcast
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.history.audit import link_history, memory_history, with_taught_links
from assocmem.engine.history.link_index import link_index
from assocmem.engine.position import Position
from assocmem.engine.recall.links import links_of
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import consolidated, document, feedback, written

YEAR = 365 * DAY
NOW = 10 * YEAR
HALF_YEAR = 180.0
"""Written half-life of these tests: the default (ten years) moves counts of two years little."""


def note(
    n: int, concepts: list[str], ts: float, text: str | None = None, agent: str = "agent"
) -> Event:
    event = written(n, concepts, text)
    return Event(event.type, event.tenant, agent, ts, event.data, position=Position(n, 0))


def consolidate(events: list[Event], rule: Rule) -> tuple[State, list[Event]]:
    """Fold `events`, then a consolidation decided on them; the state and the whole log."""
    log = [*events, consolidated(len(events) + 1, fold_from_zero(events), rule)]
    return fold_from_zero(log), log


def count(state: State, a: str, b: str) -> int:
    return state.counts.count(state.concept_index[a], state.concept_index[b])


def found_ids(state: State, concept: str) -> list[str]:
    return [
        item.memory.id for item in recall(state, Query((concept,), now=NOW, context=False)).items
    ]


def history() -> list[Event]:
    """old+link written 6 times two years ago, new+link 6 times last week, rare once long ago."""
    old = [note(n, ["old", "link"], NOW - 2 * YEAR) for n in range(1, 7)]
    new = [note(n, ["new", "link"], NOW - 7 * DAY) for n in range(7, 13)]
    return [*old, *new, note(13, ["rare", "link"], NOW - 3 * YEAR)]


def test_old_written_links_decay_by_half_lives_past_the_window_and_recent_ones_stay() -> None:
    state, _ = consolidate(
        history(), Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR)
    )
    # Two years is 640 days past a 90-day window: 0.5 ** (640 / 180) of 6 is 0.51, kept at 2
    # (a read still follows it).
    assert count(state, "old", "link") == 2
    assert count(state, "new", "link") == 6
    assert count(state, "rare", "link") == 1  # decay never erases a link
    weights = links_of(state).row(state.concept_index["link"], 0.0)
    ranked = [state.concepts[t] for t in weights.targets]
    assert ranked.index("new") < ranked.index("old")


def test_a_second_consolidation_starts_again_from_the_counts_as_written() -> None:
    events = history()
    once, log = consolidate(events, Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR))
    twice = fold_from_zero(
        [
            *log,
            consolidated(
                len(log) + 1, once, Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR)
            ),
        ]
    )
    assert count(twice, "old", "link") == count(once, "old", "link") == 2
    later = Rule(
        NOW + 60 * DAY, min_cooccurrence=0, window_days=1000.0, written_half_life_days=HALF_YEAR
    )
    restored = fold_from_zero([*log, consolidated(len(log) + 1, once, later)])
    assert count(restored, "old", "link") == 6  # inside the longer window: full weight again


def test_taught_links_fade_slower_than_written_ones_and_small_ones_are_dropped() -> None:
    events = [note(1, ["alpha", "beta"], NOW - 400 * DAY), note(2, ["gamma", "delta"], 1.0)]
    events += [feedback(3, ["1-0"], 1.0, ["zeta"]), feedback(4, ["2-0"], 0.06, ["zeta"])]
    # Feedback taught at position ms 3 and 4 (the epoch), 10 years before NOW: both decayed.
    state, _ = consolidate(events, Rule(NOW, min_cooccurrence=0, taught_half_life_days=3650.0))
    zeta = state.concept_index["zeta"]
    assert state.learned[zeta][state.concept_index["alpha"]] == 0.5 ** (
        (NOW - 0.003 - 90 * DAY) / (3650 * DAY)
    )
    assert state.concept_index["gamma"] not in state.learned.get(zeta, {})


def rated_neighbours() -> list[Event]:
    """Two streams of two notes; the second of each rated for a question its first answers:
    1.0 taught from 1-0 to 2-0, 0.06 from 3-0 to 4-0, ten years before NOW."""
    events = [note(1, ["flight", "lisbon"], 1000.0), note(2, ["seat", "window"], 1060.0)]
    events += [note(3, ["hotel", "alfama"], 1000.0, agent="b")]
    events += [note(4, ["taxi", "airport"], 1060.0, agent="b")]
    return [*events, feedback(5, ["2-0"], 1.0, ["flight"]), feedback(6, ["4-0"], 0.06, ["hotel"])]


TAUGHT_DECAY = Rule(NOW, min_cooccurrence=0, taught_half_life_days=3650.0)


def test_taught_links_between_memories_fade_as_taught_links_do_and_the_audit_says_so() -> None:
    events = rated_neighbours()
    assert fold_from_zero(events).memory_links == {
        (0, 1): (1.0, Position(5, 0)),
        (2, 3): (0.06, Position(6, 0)),
    }
    state, log = consolidate(events, TAUGHT_DECAY)
    faded = 0.5 ** ((NOW - 0.005 - 90 * DAY) / (3650 * DAY))
    assert state.memory_links == {(0, 1): (faded, Position(5, 0))}  # 0.06 fell below: dropped
    _, effect = decide(fold_from_zero(events), TAUGHT_DECAY)
    assert (effect.taught_decayed, effect.taught_dropped) == (3, 3)  # 2 + 2 concept links too

    audited = with_taught_links(state, "2-0", memory_history(log, "2-0"))
    assert [e.type for e in audited] == ["memory.written", "feedback.given", "links.consolidated"]
    assert audited[-1].detail["links"] == [{"from": "1-0", "written": "after", "taught": faded}]
    dropped = with_taught_links(state, "4-0", memory_history(log, "4-0"))[-1]
    assert dropped.detail["links"] == [{"from": "3-0", "written": "after", "taught": 0.0}]
    unrated = with_taught_links(state, "1-0", memory_history(log, "1-0"))
    assert [e.type for e in unrated] == ["memory.written"]  # nothing of its decayed


def test_a_consolidation_recorded_before_links_between_memories_faded_leaves_them() -> None:
    """links.consolidated version 1 replays as it was written: its taught half-life applied
    to the links between concepts only."""
    events = rated_neighbours()
    event = consolidated(7, fold_from_zero(events), TAUGHT_DECAY)
    old_rule = {k: v for k, v in event.data["rule"].items() if k != "decays_memory_links"}
    data, version = upcast(event.type, 1, {**event.data, "rule": old_rule})
    assert version == 2 and data["rule"]["decays_memory_links"] is False
    state = fold_from_zero([*events, dataclasses.replace(event, data=data)])
    assert state.memory_links == fold_from_zero(events).memory_links
    assert state.learned != fold_from_zero(events).learned  # the concept links faded


def test_faded_links_between_memories_replay_the_same_from_a_snapshot() -> None:
    events = rated_neighbours()
    log = [*events, consolidated(7, fold_from_zero(events), TAUGHT_DECAY)]
    log.append(feedback(8, ["2-0"], 1.0, ["flight"]))
    head = load_state(dump_state(fold_from_zero(log[:-2])))
    fold(head, log[-2:])
    assert content_hash(head) == content_hash(fold_from_zero(log))
    assert head.memory_links[(0, 1)][1] == Position(8, 0)


def test_a_pruned_concept_loses_its_links_but_its_memory_is_still_found() -> None:
    events = [note(1, ["lonely", "word"], NOW), note(2, ["busy", "word", "more"], NOW)]
    state, log = consolidate(events, Rule(NOW, min_cooccurrence=2))
    pruned = log[-1].data["pruned"]
    assert "lonely" in pruned and "busy" not in pruned
    assert count(state, "lonely", "word") == 0 and count(state, "busy", "word") == 1
    assert found_ids(state, "lonely") == ["1-0"]
    for kept in (state, load_state(dump_state(state))):  # an audit still knows it
        assert link_index(kept, "lonely", "word").unknown == {}


def test_the_vocabulary_cap_keeps_the_concepts_with_most_cooccurrences() -> None:
    events = [note(1, ["a", "b", "c"], NOW), note(2, ["a", "b"], NOW), note(3, ["x", "y"], NOW)]
    _, log = consolidate(events, Rule(NOW, min_cooccurrence=0, vocabulary_cap=3))
    assert sorted(log[-1].data["pruned"]) == ["x", "y"]


def test_a_concept_with_a_taught_link_is_never_pruned() -> None:
    events = [note(1, ["lonely", "word"], NOW), feedback(2, ["1-0"], 1.0, ["asked"])]
    # Taught at the epoch (position 2-0): a ten-year window keeps it from fading.
    _, log = consolidate(events, Rule(NOW, min_cooccurrence=5, window_days=3650.0))
    assert "lonely" not in log[-1].data["pruned"] and "asked" not in log[-1].data["pruned"]


def test_duplicates_of_one_agent_merge_into_the_newest_and_the_audit_says_so() -> None:
    events = [
        note(1, ["deploy", "fix"], NOW, "Fix the deploy."),
        note(2, ["deploy", "fix"], NOW, "fix the  DEPLOY"),
        note(3, ["deploy", "fix"], NOW, "Fix the deploy.", agent="other"),
    ]
    state, log = consolidate(events, Rule(NOW))
    assert state.memories["1-0"].superseded_by == "2-0"
    assert state.memories["3-0"].superseded_by is None
    assert sorted(found_ids(state, "deploy")) == ["2-0", "3-0"]
    merged = memory_history(log, "1-0")[-1].detail
    assert (merged["superseded_by"], merged["merged"], merged["rule"]["at"]) == ("2-0", True, NOW)


def test_alike_notes_of_two_scopes_are_not_duplicates() -> None:
    events = [
        dataclasses.replace(note(1, ["deploy", "fix"], NOW, "Fix the deploy."), namespace="ops"),
        note(2, ["deploy", "fix"], NOW, "fix the deploy"),
        dataclasses.replace(note(3, ["deploy", "fix"], NOW, "Fix the deploy"), user="alice"),
        dataclasses.replace(note(4, ["deploy", "fix"], NOW, "Fix the deploy"), session="s1"),
        dataclasses.replace(note(5, ["deploy", "fix"], NOW, "fix the DEPLOY"), namespace="ops"),
    ]
    state, _ = consolidate(events, Rule(NOW))
    merged = {m.id: m.superseded_by for m in state.rows if m.superseded_by}
    assert merged == {"1-0": "5-0"}  # the one pair in one scope


@given(st.text() | st.text(st.characters(max_codepoint=127)))
def test_words_of_a_text_are_its_words_casefolded_one_space_apart(text: str) -> None:
    assert _words(text) == re.sub(r"[\W_]+", " ", text.casefold()).strip()


def test_a_state_loaded_from_a_snapshot_finds_the_same_duplicates() -> None:
    events = [
        note(1, ["deploy", "fix"], NOW, "Fix the deploy."),
        dataclasses.replace(note(2, ["deploy", "fix"], NOW, "fix the deploy"), user="alice"),
        note(3, ["deploy", "fix"], NOW, "fix the  DEPLOY"),
        dataclasses.replace(note(4, ["deploy", "fix"], NOW, "Fix the deploy!"), user="alice"),
        note(5, ["deploy", "fix"], NOW, "Fix the deploy.", agent="other"),
    ]
    folded = fold_from_zero(events)
    decision, _ = decide(folded, Rule(NOW))
    assert decision.merged == (("1-0", "3-0"), ("2-0", "4-0"))
    assert decide(load_state(dump_state(folded)), Rule(NOW))[0] == decision


def test_deciding_leaves_the_state_untouched_and_reports_what_applying_does() -> None:
    state = fold_from_zero(history())
    before = content_hash(state)
    decision, effect = decide(
        state, Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR)
    )
    assert content_hash(state) == before
    assert (effect.links_decayed, effect.links_dropped, effect.written_removed) == (1, 0, 4)


def test_the_audit_lists_the_consolidation_that_decayed_a_link() -> None:
    _, log = consolidate(history(), Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR))
    changes = link_history(log, "old", "link").changes
    assert changes[-1].type == "links.consolidated"
    assert (changes[-1].written, changes[-1].count) == (-4, 2)


def test_the_audit_counts_a_note_after_a_consolidation_from_the_decayed_count() -> None:
    _, log = consolidate(history(), Rule(NOW, min_cooccurrence=0, written_half_life_days=HALF_YEAR))
    log.append(note(len(log) + 1, ["old", "link"], NOW))
    changes = link_history(log, "old", "link").changes
    assert [(c.type, c.written, c.count) for c in changes[-2:]] == [
        ("links.consolidated", -4, 2),
        ("memory.written", 1, 3),
    ]


def test_a_decision_made_earlier_applies_the_same_in_replay_and_from_a_snapshot() -> None:
    events = history()
    decided_on = fold_from_zero(events[:8])
    log = [*events, consolidated(20, decided_on, Rule(NOW, written_half_life_days=HALF_YEAR))]
    log.append(note(21, ["old", "link"], NOW))
    head = load_state(dump_state(fold_from_zero(log[:-1])))
    fold(head, log[-1:])
    assert content_hash(head) == content_hash(fold_from_zero(log))


def test_with_decay_off_the_counts_are_the_recount_at_full_weight() -> None:
    """No half-life skips the recount of every memory (seconds at 60,000 notes, paid again by
    every replay): it must leave what a recount at full weight would."""
    events = [*history(), document(14, [["link", "doc"], ["doc", "rare"]])]
    off, _ = consolidate(events, Rule(NOW, min_cooccurrence=0))
    full_weight = Rule(NOW, min_cooccurrence=0, window_days=36_500.0, written_half_life_days=1.0)
    recounted, _ = consolidate(events, full_weight)
    assert content_hash(off) == content_hash(recounted)


@pytest.mark.parametrize(
    "merged",
    [[["1-0"]], [["1-0", "2-0", "3-0"]], [["1-0", ""]], [["1-0", 2]], ["1-0"], [None], {}],
)
def test_a_consolidation_whose_merged_memories_are_not_pairs_of_ids_is_rejected(
    merged: object,
) -> None:
    event = consolidated(2, fold_from_zero([written(1, ["a", "b"])]), Rule(at=NOW))
    LINKS_CONSOLIDATED.check(event.data)  # as decided, it passes
    with pytest.raises(InvalidEvent, match="merged"):
        LINKS_CONSOLIDATED.check({**event.data, "merged": merged})
