"""Payload checks: the fast whole-list passes accept exactly what the rule item by item
accepts (the fold runs them on every event, the application before every append)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.concept import MAX_CONCEPT_LENGTH
from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.payload import MAX_CONCEPTS, check_concepts, check_labels

# Short words from a few letters, whitespace of several kinds and NUL, and some too long
WORDS = st.one_of(
    st.text(st.sampled_from("ab \t\u00a0\u2003\x00\n"), max_size=4),
    st.just("x" * (MAX_CONCEPT_LENGTH + 1)),
    st.just("y" * MAX_CONCEPT_LENGTH),
)


def concepts_allowed(concepts: list) -> bool:
    return (
        all(isinstance(c, str) for c in concepts)
        and len(concepts) <= MAX_CONCEPTS
        and len(set(concepts)) == len(concepts)
        and all(0 < len(c) <= MAX_CONCEPT_LENGTH and c == c.strip() for c in concepts)
    )


def accepts(check: object, *args: object) -> bool:
    try:
        check(*args)  # type: ignore[operator]
    except InvalidEvent:
        return False
    return True


@given(st.lists(st.one_of(WORDS, st.integers(), st.none()), max_size=8))
@settings(max_examples=500, deadline=None)
def test_concepts_are_accepted_exactly_when_each_is_a_distinct_normalised_string(
    concepts: list,
) -> None:
    assert accepts(check_concepts, concepts) == concepts_allowed(concepts)


@given(st.dictionaries(WORDS, st.one_of(WORDS, st.integers()), max_size=6), st.data())
@settings(max_examples=500, deadline=None)
def test_labels_are_accepted_exactly_when_they_name_known_concepts_with_words(
    labels: dict, data: st.DataObject
) -> None:
    concepts = data.draw(st.lists(WORDS, max_size=6, unique=True)) + list(labels)[:3]
    allowed = all(
        isinstance(w, str) and 0 < len(w) <= MAX_CONCEPT_LENGTH for w in labels.values()
    ) and set(labels) <= set(concepts)
    assert accepts(check_labels, labels, set(concepts)) == allowed


def test_concepts_that_are_not_a_list_are_refused() -> None:
    for concepts in ("retry", {"retry": 1}, None, ("retry",)):
        with pytest.raises(InvalidEvent, match="not a list of strings"):
            check_concepts(concepts)
