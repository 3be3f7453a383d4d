"""Notes indexed in bulk at a flush count their words and pick labels as one at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.state.cooccurrence import grouped_window_pairs, window_pairs
from assocmem.engine.state.staged_notes import Uses, count_surfaces
from assocmem.engine.state.state import State

CONCEPTS = ["a", "b", "c", "d"]
WORDS = ["a", "b", "c", "d", "x", "y", "z"]
notes = st.lists(
    st.dictionaries(st.sampled_from(CONCEPTS), st.sampled_from(WORDS), min_size=1),
    max_size=30,
)


def state_after(history: list[dict[str, str]], with_base: bool) -> State:
    state = State()
    for concept in CONCEPTS:
        state.intern(concept)
    for note in history:
        state.note_surfaces([state.concept_index[c] for c in note], note)
    if with_base:
        state.mark_base()
    return state


def observed(state: State) -> tuple[object, ...]:
    in_order = [list(words.items()) for words in state.surfaces]
    touched = state.base.touched_concepts if state.base else None
    return in_order, state.labels, state.relabelled, touched


@given(notes, notes, st.booleans())
@settings(max_examples=300, deadline=None)
def test_counting_many_notes_at_once_equals_one_note_at_a_time(
    history: list[dict[str, str]], batch: list[dict[str, str]], with_base: bool
) -> None:
    one_by_one = state_after(history, with_base)
    for note in batch:
        one_by_one.note_surfaces([one_by_one.concept_index[c] for c in note], note)
    at_once = state_after(history, with_base)
    count_surfaces(at_once, uses_of(at_once, batch))
    assert observed(at_once) == observed(one_by_one)


def uses_of(state: State, notes: list[dict[str, str]]) -> Uses:
    """`notes` (concept -> the word written for it) as the fold stages them."""
    indices = [state.concept_index[c] for note in notes for c in note]
    offsets = np.cumsum([0, *map(len, notes)])
    return Uses(state, np.array(indices, dtype=np.int32), offsets, notes)


def test_a_tie_goes_to_the_word_that_reached_the_top_first() -> None:
    state = state_after([{"a": "x"}], with_base=False)  # x: 1, the label
    uses = ["y", "z", "z", "y"]  # x 1, y 2, z 2: z got to 2 first
    count_surfaces(state, uses_of(state, [{"a": word} for word in uses]))
    assert state.labels[0] == "z"


@given(st.lists(st.lists(st.integers(0, 9), max_size=12), max_size=8), st.integers(2, 14))
def test_window_pairs_are_the_pairs_of_each_list_within_the_window(
    lists: list[list[int]], window: int
) -> None:
    first, second, group = grouped_window_pairs(lists, window)
    expected = sorted(
        (n, items[a], items[b])
        for n, items in enumerate(lists)
        for a in range(len(items))
        for b in range(a + 1, min(len(items), a + window))
        if items[a] != items[b]
    )
    found = sorted(zip(group.tolist(), first.tolist(), second.tolist(), strict=True))
    assert found == expected
    assert first.dtype == np.int32
    ungrouped = window_pairs(lists, window)
    assert ungrouped[0].tolist() == first.tolist() and ungrouped[1].tolist() == second.tolist()
