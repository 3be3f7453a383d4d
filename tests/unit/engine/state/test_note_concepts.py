"""The C functions (engine/state/_note_concepts.c) give the answers of their Python
(engine/state/note_concepts.py), which is itself held to the type's own check by
test_checked_note.py and to one note at a time by test_staged_notes.py. Where a C compiler and Python's headers are, the C one is built and
used, or the fold takes a third longer than it needs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assocmem.engine.state import note_concepts
from assocmem.engine.state.note_concepts import (
    checked_concepts_in_python,
    counted_labels_in_python,
)
from tests.unit.engine.native import skip_unless_c_can_be_built


@pytest.fixture(scope="module")
def native():
    return pytest.importorskip(
        "assocmem.engine.state._note_concepts", reason="the C extension was not built here"
    )


# Few letters, so that repeats and labels of the note's own concepts are common; spaces
# of several kinds, inside and at the ends
words = st.text(st.sampled_from("ab火 \t\u2003\u00a0\u200b"), min_size=1, max_size=4)


@st.composite
def notes(draw: st.DrawFn) -> tuple[list[str], dict[str, str], dict[str, int]]:
    concepts = draw(st.lists(words, max_size=12))
    keys = st.sampled_from(concepts) | words if concepts else words
    labels = draw(st.dictionaries(keys, words, max_size=4))
    known = draw(st.lists(words, max_size=8))
    return concepts, labels, {c: n for n, c in enumerate(known)}


@given(note=notes())
def test_the_c_checks_and_looks_up_as_the_python_does(native, note) -> None:
    concepts, labels, index = note
    # Copies, so that equal strings are other objects, as a decoder makes them
    copied = [c.encode().decode() for c in concepts]
    assert native.checked_concepts(copied, labels, index) == checked_concepts_in_python(
        concepts, labels, index
    )


def test_a_note_of_the_most_concepts_is_checked_the_same(native) -> None:
    concepts = [f"c{n}" for n in range(300)]  # past the C's table on its stack
    index = {c: n for n, c in enumerate(concepts[::2])}
    assert native.checked_concepts(concepts, {}, index) == checked_concepts_in_python(
        concepts, {}, index
    )
    assert native.checked_concepts([*concepts, "c299"], {}, index) is None


def test_the_c_one_is_the_one_used(native) -> None:
    assert note_concepts.checked_concepts is native.checked_concepts and note_concepts.NATIVE


def test_it_is_built_wherever_it_can_be() -> None:
    skip_unless_c_can_be_built()
    assert note_concepts.NATIVE


@given(labels=st.lists(st.dictionaries(words, words, max_size=4), max_size=12))
def test_the_c_counts_labels_as_the_python_does(native, labels) -> None:
    copied = [{k.encode().decode(): v.encode().decode() for k, v in d.items()} for d in labels]
    counted = native.counted_labels(copied)
    expected = counted_labels_in_python(labels)
    assert counted == expected
    assert [list(words.items()) for words in counted.values()] == [
        list(words.items()) for words in expected.values()
    ]  # words in the order of their first use


def test_a_label_used_past_the_small_ints_is_counted(native) -> None:
    assert native.counted_labels([{"a": "b"}] * 300) == {"a": {"b": 300}}
