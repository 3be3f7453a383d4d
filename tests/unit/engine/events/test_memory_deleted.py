"""memory.deleted: a deleted memory is in no read, listing or link, as if never written."""

from __future__ import annotations

import numpy as np

from assocmem.engine.events.consolidation import Rule
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.listing import Filter, listed
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.visibility import Visibility
from tests.unit.engine.make_events import (
    acceptance_notes,
    consolidated,
    deleted,
    feedback,
    written,
)

EVERYONE = Visibility(everything=True)


def counts(state) -> np.ndarray:
    size = len(state.concepts)
    return state.counts.matrix().toarray()[:size, :size]


def test_a_deleted_memory_is_in_no_read_listing_or_link_it_wrote() -> None:
    notes = acceptance_notes()  # 1-0 and 2-0 write a-b; 5-0 writes a-e
    state = fold_from_zero([*notes, deleted(7, "2-0")])
    never = fold_from_zero([n for n in notes if str(n.position) != "2-0"])
    assert state.counts.count(*(state.concept_index[c] for c in "ab")) == 1
    assert np.array_equal(counts(state), counts(never))
    for history in (False, True):
        read = recall(state, Query(("a",), history=history))
        assert "2-0" not in {item.memory.id for item in read.items}
    assert "2-0" not in {
        state.rows[r].id for r in listed(state, EVERYONE, Filter(superseded=True), None, 10)
    }
    # the a-b link fell below the floor of 2: b is no longer followed from a
    assert "b" not in recall(state, Query(("a",))).expanded_concepts
    again = fold_from_zero([*notes, deleted(7, "2-0"), deleted(8, "2-0"), deleted(9, "99-0")])
    assert content_hash(again) != content_hash(state)  # positions moved on
    assert again.deleted == state.deleted and np.array_equal(counts(again), counts(state))


def test_deletion_survives_a_snapshot_and_a_consolidation() -> None:
    notes = [written(n, ["a", "b", "c"]) for n in range(1, 5)]
    state = fold_from_zero([*notes, deleted(5, "1-0")])
    loaded = load_state(dump_state(state))
    assert content_hash(loaded) == content_hash(state)
    assert loaded.deleted == state.deleted and not loaded.alive.values[0]
    rule = Rule(at=10.0, window_days=1e-5, written_half_life_days=1e-4)
    after = fold_from_zero([*notes, deleted(5, "1-0"), consolidated(6, state, rule)])
    written_now = after.counts.written().toarray()
    a, b = after.concept_index["a"], after.concept_index["b"]
    assert written_now[a, b] == 3  # the deleted note's pair is not recounted


def test_what_feedback_unlearned_of_a_deleted_memory_s_link_goes_with_it() -> None:
    """Hypothesis found it: a link written once and unlearned by an unhelpful rating was
    left at -1 once the memory that wrote it was deleted, below nothing written."""
    state = fold_from_zero(
        [written(1, ["a", "b"]), feedback(2, ["1-0"], -1.0, ["a"]), deleted(3, "1-0")]
    )
    a, b = state.concept_index["a"], state.concept_index["b"]
    assert state.counts.count(a, b) == 0
    assert state.learned.get(a, {}).get(b, 0.0) == 0.0
    assert content_hash(load_state(dump_state(state))) == content_hash(state)
