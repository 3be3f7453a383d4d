"""The invariants that define the system, over generated event histories."""

from __future__ import annotations

import dataclasses

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from assocmem.engine.events.consolidation import Rule
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.snapshot.delta import encode_delta, load_snapshot
from assocmem.engine.state import cooccurrence
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import (
    accessed,
    activity,
    consolidated,
    deleted,
    document,
    feedback,
    importance_set,
    written,
)

CONCEPTS = ["a", "b", "c", "d", "e", "f", "g"]
WORDS = ["a", "b", "x", "y"]
KINDS = [
    "write",
    "write",
    "feedback",
    "activity",
    "document",
    "accessed",
    "importance",
    "consolidate",
    "delete",
]
SCOPES = st.sampled_from(
    [(None, None, None), (None, "alice", None), (None, "bob", None), (None, "alice", "s1"),
     ("ops", None, None), ("ops", "alice", None)]
)  # fmt: skip
"""(namespace, user, session) of an event: links are kept apart by them (scoped_links.py)."""
DAYS = st.floats(1e-5, 1e-4)
"""Windows and half-lives of generated consolidations: event times are seconds apart."""


@st.composite
def histories(draw: st.DrawFn, tenant: str = "t") -> list[Event]:
    """Every event type, in any order; events naming memories name ones written before."""
    steps = draw(
        st.lists(
            st.tuples(
                st.sampled_from(KINDS),
                st.lists(st.sampled_from(CONCEPTS), min_size=1, max_size=4, unique=True),
            ),
            min_size=1,
            max_size=40,
        )
    )
    outcomes = st.floats(-1.0, 1.0, allow_nan=False)
    events: list[Event] = []
    for n, (kind, concepts) in enumerate(steps, start=1):
        known = [str(e.position) for e in events if e.type in ("memory.written", "activity.logged")]
        if kind == "write" or not known and kind != "document":
            event = written(n, concepts, tenant=tenant)
            if draw(st.booleans()):  # ranked concepts: core, important, supplement
                matched = draw(st.integers(0, len(concepts)))
                event.data["tiers"] = [draw(st.integers(0, matched)), matched]
            if draw(st.booleans()):  # words written for some concepts: labels may change
                event.data["labels"] = draw(
                    st.dictionaries(st.sampled_from(concepts), st.sampled_from(WORDS))
                )
            if known and draw(st.booleans()):
                event.data["supersedes"] = [draw(st.sampled_from(known))]
            events.append(event)
        elif kind == "feedback":
            ids = draw(st.lists(st.sampled_from(known), min_size=1, max_size=3))
            events.append(feedback(n, ids, draw(outcomes), concepts, tenant))
        elif kind == "activity":
            events.append(activity(n, concepts, tenant=tenant))
        elif kind == "document":
            events.append(document(n, [concepts, list(reversed(concepts))], tenant=tenant))
        elif kind == "accessed":
            events.append(
                accessed(
                    n,
                    draw(st.lists(st.sampled_from(known), min_size=1, max_size=3, unique=True)),
                    tenant,
                )
            )
        elif kind == "consolidate":
            # Decided on an earlier state (events may land while the job runs), applied here.
            decided_on = fold_from_zero(events[: draw(st.integers(0, len(events)))])
            rule = Rule(
                at=n + draw(st.floats(0, 30)),
                window_days=draw(DAYS),
                written_half_life_days=draw(st.none() | DAYS),
                taught_half_life_days=draw(DAYS),
                min_cooccurrence=draw(st.integers(0, 3)),
                vocabulary_cap=draw(st.integers(0, 8)),
                merge_duplicates=draw(st.booleans()),
            )
            events.append(consolidated(n, decided_on, rule, tenant))
        elif kind == "delete":
            events.append(deleted(n, draw(st.sampled_from(known)), tenant))
        else:
            events.append(
                importance_set(n, draw(st.sampled_from(known)), draw(st.integers(1, 5)), tenant)
            )
        if events[-1].type in LINK_MAKERS:
            namespace, user, session = draw(SCOPES)
            events[-1] = dataclasses.replace(
                events[-1], namespace=namespace, user=user, session=session
            )
    return events


LINK_MAKERS = ("memory.written", "activity.logged", "document.ingested", "feedback.given")


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_snapshot_plus_tail_equals_fold_from_zero(events: list[Event], data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(events)))
    head = fold_from_zero(events[:cut])
    resumed = load_state(dump_state(head))
    fold(resumed, events[cut:])
    assert content_hash(resumed) == content_hash(fold_from_zero(events))


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_incremental_batches_equal_one_replay(events: list[Event], data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=5)))
    state = State()
    for start, end in zip([0, *cuts], [*cuts, len(events)], strict=True):
        fold(state, events[start:end])
    assert content_hash(state) == content_hash(fold_from_zero(events))


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_events_checked_before_they_were_appended_fold_as_the_log_s_do(
    events: list[Event], data: st.DataObject
) -> None:
    """The API folds its own appends unchecked (the application checked them): a run of
    them after a state folded from the log gives that state."""
    cut = data.draw(st.integers(0, len(events)))
    state = fold_from_zero(events[:cut])
    fold(state, events[cut:], checked=True)
    assert content_hash(state) == content_hash(fold_from_zero(events))


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_replaying_already_folded_positions_changes_nothing(
    events: list[Event], data: st.DataObject
) -> None:
    state = fold_from_zero(events)
    before = content_hash(state)
    start = data.draw(st.integers(0, len(events) - 1))
    fold(state, events[start:])
    assert content_hash(state) == before


@given(histories())
@settings(max_examples=60, deadline=None)
def test_feedback_never_unlearns_more_than_was_written(events: list[Event]) -> None:
    """The learned delta the fold stores is never below minus the written count: unhelpful
    feedback can take a written link away, not make it negative."""
    state = fold_from_zero(events)
    for i, row in state.learned.items():
        for j, learned in row.items():
            assert learned >= -state.counts.count(i, j)
            assert state.learned[j][i] == learned  # symmetric


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_a_delta_on_its_base_is_the_state_and_the_next_delta_follows_from_it(
    events: list[Event], data: st.DataObject
) -> None:
    """Publishing a full snapshot at `first`, deltas at `second` and at the end: each delta
    applied to the base decodes to the state it was taken from, postings and columns
    included, and a state loaded from a delta takes its next delta from the same base."""
    first, second = sorted(data.draw(st.lists(st.integers(0, len(events)), min_size=2, max_size=2)))
    state = fold_from_zero(events[:first])
    base_blob = dump_state(state)
    state.mark_base()
    fold(state, events[first:second])
    delta = encode_delta(state)
    loaded = load_snapshot(delta, lambda _: base_blob)
    assert content_hash(loaded) == content_hash(state)
    assert_same_index(loaded, state)
    fold(loaded, events[second:])
    fold(state, events[second:])
    later = load_snapshot(encode_delta(loaded), lambda _: base_blob)
    assert content_hash(later) == content_hash(state) == content_hash(fold_from_zero(events))


@given(histories(), st.data())
@settings(max_examples=80, deadline=None)
def test_a_small_delta_on_a_delta_on_its_base_is_the_state_and_deltas_follow_from_it(
    events: list[Event], data: st.DataObject
) -> None:
    """A full snapshot at the first cut, a delta of it at the second, small deltas of that
    delta at the third and the fourth: each loads, through the blobs it names, as the state
    it was taken from, and a state loaded from a small delta takes its next deltas of
    either size from the same bases."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), min_size=4, max_size=4)))
    assume(cuts[0] < cuts[1] < cuts[2])  # a snapshot is published once the state moved on
    state = fold_from_zero(events[: cuts[0]])
    blobs = {"full": dump_state(state)}
    state.mark_base()
    fold(state, events[cuts[0] : cuts[1]])
    blobs["delta"] = encode_delta(state)
    state.mark_level()
    fetch = {state.base.position: blobs["full"], state.position: blobs["delta"]}.get
    fold(state, events[cuts[1] : cuts[2]])
    small = encode_delta(state, state.level)
    loaded = load_snapshot(small, fetch)
    assert content_hash(loaded) == content_hash(state)
    assert_same_index(loaded, state)
    fold(loaded, events[cuts[2] : cuts[3]])
    fold(state, events[cuts[2] : cuts[3]])
    assert loaded.level is not None and state.level is not None
    assert content_hash(load_snapshot(encode_delta(loaded, loaded.level), fetch)) == content_hash(
        state
    )
    assert content_hash(load_snapshot(encode_delta(loaded), fetch)) == content_hash(state)
    fold(state, events[cuts[3] :])
    assert content_hash(state) == content_hash(fold_from_zero(events))


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_a_loaded_snapshot_indexes_its_memories_as_the_fold_did(
    events: list[Event], data: st.DataObject
) -> None:
    """Loading builds postings and columns in bulk; the content hash does not cover them,
    so they are compared here with the fold's own, concept by concept."""
    cut = data.draw(st.integers(0, len(events)))
    folded = fold_from_zero(events)
    loaded = load_state(dump_state(fold_from_zero(events[:cut])))
    fold(loaded, events[cut:])
    assert_same_index(loaded, folded)
    assert loaded.activity_rows == folded.activity_rows
    assert loaded.scoped_rows == folded.scoped_rows
    assert list(loaded.memories) == list(folded.memories)
    # Rows are made into memories when asked for: by id first for some, by row for the rest.
    for memory_id in data.draw(st.lists(st.sampled_from(list(folded.memories) or ["none"]))):
        assert loaded.memories.get(memory_id) == folded.memories.get(memory_id)
    assert [dataclasses.asdict(m) for m in loaded.rows] == [
        dataclasses.asdict(m) for m in folded.rows
    ]


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_rows_folded_in_parts_read_as_the_rows_one_fold_makes(
    events: list[Event], data: st.DataObject
) -> None:
    """Each fold places its notes as a block of columns, made into objects when asked for:
    feedback, accesses and merges in later parts change them as one fold does."""
    folded = fold_from_zero(events)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=4)))
    parts = State()
    for start, end in zip([0, *cuts], [*cuts, len(events)], strict=True):
        fold(parts, events[start:end])
    assert content_hash(parts) == content_hash(folded)
    assert [dataclasses.asdict(m) for m in parts.rows] == [
        dataclasses.asdict(m) for m in folded.rows
    ]
    for column in ("ts", "importance", "valence", "accesses", "alive", "length"):
        assert getattr(parts, column).values.tolist() == getattr(folded, column).values.tolist()


@given(histories())
@settings(max_examples=80, deadline=None)
def test_notes_kept_staged_across_feedback_index_as_one_event_at_a_time(
    events: list[Event],
) -> None:
    """A fold indexes its notes in bulk, across the feedback, accesses and importance
    changes between them; folding one event at a time indexes each note at once."""
    staged = fold_from_zero(events)
    one_by_one = State()
    for event in events:
        fold(one_by_one, [event])
    assert content_hash(staged) == content_hash(one_by_one)
    assert_same_index(staged, one_by_one)
    assert [dataclasses.asdict(m) for m in staged.rows] == [
        dataclasses.asdict(m) for m in one_by_one.rows
    ]


@given(histories(), st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_link_windows_merged_every_few_notes_count_as_those_merged_when_asked(
    events: list[Event], at_most: int
) -> None:
    """The fold merges its pending link windows once PENDING_AT_MOST gather, asked or not."""
    kept = cooccurrence.PENDING_AT_MOST
    cooccurrence.PENDING_AT_MOST = at_most
    try:
        merged_often = fold_from_zero(events)
    finally:
        cooccurrence.PENDING_AT_MOST = kept
    assert content_hash(merged_often) == content_hash(fold_from_zero(events))


def assert_same_index(state: State, other: State) -> None:
    """Postings and columns, which the content hash does not cover."""
    for concept in range(len(other.concepts)):
        for mine, theirs in zip(
            state.postings.of(concept), other.postings.of(concept), strict=True
        ):
            assert mine.tolist() == theirs.tolist()
    for column in ("ts", "importance", "valence", "accesses", "alive", "length"):
        assert getattr(state, column).values.tolist() == getattr(other, column).values.tolist()
