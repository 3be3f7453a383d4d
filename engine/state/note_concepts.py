"""A checked note's concepts: the rules their types cannot say, and each one's index; and
the words written for them, counted.

The workers' fold asks this of every note it decodes and stages (engine/events/checked_note.py,
engine/state/staged_notes.py), so it runs in C where the extension `_note_concepts` was built
(setup.py builds it wherever a C compiler and Python's headers are): a set of a note's
concepts and a lookup of each, and a Counter of their labels, were a large part of the
fold in Python (bench/README.md has what the C is worth). The Python functions
run where the extension was not built; tests/unit/engine/state/test_note_concepts.py holds the
two to the same answers."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import chain

from assocmem.engine.concept import without_whitespace


def checked_concepts_in_python(
    concepts: list[str], labels: dict[str, str], index: dict[str, int]
) -> tuple[array[int], tuple[int, ...]] | None:
    """None where a concept is repeated or has space at either end (inside, as in a
    phrase, is fine), or a label is of no concept of the note; else each concept's index
    in `index` (-1: one it does not hold) as an array('i'), which the fold copies into its
    columns as it is, and the places of those it does not hold."""
    distinct = set(concepts)
    if len(distinct) != len(concepts):
        return None
    if not without_whitespace("".join(concepts)) and any(c != c.strip() for c in concepts):
        return None
    if not labels.keys() <= distinct:
        return None
    indices = array("i", [index.get(c, -1) for c in concepts])
    return indices, tuple(at for at, number in enumerate(indices) if number == -1)


def counted_labels_in_python(labels: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """Per concept labelled in any of `labels` (each note's concept -> the word written for
    it), the uses of each word, in the order of their first use."""
    counted: dict[str, dict[str, int]] = {}
    for (concept, word), count in Counter(chain.from_iterable(map(dict.items, labels))).items():
        counted.setdefault(concept, {})[word] = count
    return counted


try:
    from assocmem.engine.state._note_concepts import checked_concepts, counted_labels
except ImportError:  # not built: no C compiler or no Python headers where it was installed
    checked_concepts, counted_labels = checked_concepts_in_python, counted_labels_in_python
    NATIVE = False
else:
    NATIVE = True

NOT_NATIVE = (
    "the fold's C extension was not built at install (no C compiler or no Python headers):"
    " it runs in Python, a third slower; apt-get install gcc python3-dev, then make clean install"
)
