"""Notes the fold has registered but not yet indexed.

A run of notes gets its postings, columns and word counts in a few bulk steps at the
end instead of a Python step per concept of every note. The fold flushes them before
any event whose handler reads indexed notes (`EventType.keeps_staged`), every
STAGED_AT_MOST notes and at its end, so no reader ever sees a staged note.

Notes are staged as columns (engine/state/note_columns.py), placed as a block of rows
before any other event and indexed here. Folding long runs of notes read ahead into
blocks (2b1ed56, reverted) made a fold from zero slower and its peak memory larger, the
notes read ahead going cold before they were folded: columns are taken from each note as
it is decoded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from assocmem.engine.state.note_concepts import counted_labels

if TYPE_CHECKING:
    from assocmem.engine.state.state import State


class Uses:
    """The uses of concepts by a run of notes: which word each use wrote.

    Most uses write the concept itself, so they are counted as numbers (`concepts`, one
    index per use); only the words that differ from their concept are counted as strings,
    straight from the notes' labels. Counting every use as an (index, word) pair took a
    third of the fold of commit messages, and numbering every word as its note was staged
    cost as much again (4e920a6, reverted): what costs is hashing strings, one per use."""

    def __init__(
        self, state: State, concepts: np.ndarray, offsets: np.ndarray, labels: list[dict[str, str]]
    ) -> None:
        """`concepts`: each use's concept index, note after note; note n's uses are
        `concepts[offsets[n]:offsets[n + 1]]`; `labels`: each note's."""
        self._state, self._concepts, self._offsets, self._labels = state, concepts, offsets, labels
        total = np.bincount(concepts)
        self.used = np.flatnonzero(total).tolist()
        """The concepts used, by index, ascending."""
        self.total: list[int] = total.tolist()
        """Per concept index, its uses (under any word)."""
        self.other: dict[int, dict[str, int]] = {}
        """Per concept, its uses under each word other than itself, in order of first use."""
        index = state.concept_index
        for concept, words in counted_labels(labels).items():
            words.pop(concept, None)  # written as itself: counted in `total`
            if words:
                self.other[index[concept]] = words

    def of(self, index: int, surface: str) -> int:
        """Uses of concept `index` that wrote `surface`."""
        other = self.other.get(index)
        if surface != self._state.concepts[index]:
            return other.get(surface, 0) if other else 0
        return self.total[index] - (sum(other.values()) if other else 0)

    def notes_of(self, wanted: list[int]) -> dict[int, np.ndarray]:
        """Per concept of `wanted`, the notes that use it, in order: an array each, since a
        reader looks through the first few (as lists, the notes of 2,085 concepts were
        690,000 numbers made for a fold of 60,000 commit messages from zero)."""
        if not wanted:
            return {}
        # Each wanted concept's rank among them, the others -1: a lookup per use, and a sort
        # of ranks that fit in 16 bits is numpy's radix sort, where np.isin and a stable sort
        # of the indices took a fourteenth of a fold of 60,000 commit messages from zero
        ranks = np.full(len(self.total), -1, dtype=np.int16 if len(wanted) < 2**15 else np.int32)
        ranks[sorted(wanted)] = np.arange(len(wanted))  # the concepts in order, as ever
        used = ranks[self._concepts]
        at = np.flatnonzero(used >= 0)
        notes = np.searchsorted(self._offsets, at, side="right") - 1  # uses in order: fast
        order = np.argsort(used[at], kind="stable")
        concepts, notes = self._concepts[at[order]], notes[order]
        starts = [0, *(np.flatnonzero(np.diff(concepts)) + 1).tolist()]
        ends = [*starts[1:], len(notes)]
        firsts = concepts[starts].tolist()
        return {
            first: notes[start:end] for first, start, end in zip(firsts, starts, ends, strict=True)
        }

    def word(self, note: int, index: int) -> str:
        """The word note `note` wrote for concept `index` (one it uses)."""
        name = self._state.concepts[index]
        return self._labels[note].get(name, name)


def count_surfaces(state: State, uses: Uses) -> None:
    """`State.note_surfaces` for many uses at once, with the same counts, labels and order.

    One use at a time, a concept's label is always the first of its surfaces to reach the
    highest count (it changes only when another one passes it), so the label after many
    uses follows from the counts, and from the order only when several surfaces tie.
    """
    names, labels, words, total = state.concepts, state.labels, state.surfaces, uses.total
    # New surfaces enter each concept's counts in the order of their first use
    first_used = _first_used(state, uses)
    moved: list[int] = []
    for index in uses.used:
        counts, name, other = words[index], names[index], uses.other.get(index)
        if other is None:  # every use wrote the concept itself: most of them
            counts[name] = counts.get(name, 0) + total[index]
            if name != labels[index]:
                moved.append(index)
            continue
        order = first_used.get(index)
        if order is None:
            order = [name, *other] if uses.of(index, name) else list(other)
        for surface in order:
            counts[surface] = counts.get(surface, 0) + uses.of(index, surface)
        if any(surface != labels[index] for surface in order):
            moved.append(index)
    state.touch_concepts(uses.used)
    ties: dict[int, dict[str, int]] = {}
    for index in moved:
        counts, label = words[index], labels[index]
        top = max(counts.values())
        if top == counts.get(label, 0) - uses.of(index, label):
            continue  # nothing passed the label
        leaders = [s for s, n in counts.items() if n == top]
        if len(leaders) == 1:
            if leaders[0] != label:
                state.set_label(index, leaders[0])
        else:  # the use of each that reached `top`: the first of them wins
            ties[index] = {s: top - (counts[s] - uses.of(index, s)) for s in leaders}
    if ties:
        _break_ties(state, uses, ties)


def _first_used(state: State, uses: Uses) -> dict[int, list[str]]:
    """The surfaces of each concept in the order of their first use, where that order
    is not the concept first, then its other words: only when the concept itself and
    another word are both new to its counts.

    The other words are in that order already (`Uses.other`), so what is looked for is
    the concept's first use of itself: the words first used before it come before it."""
    names, words = state.concepts, state.surfaces
    unsure = [
        index
        for index, other in uses.other.items()
        if names[index] not in words[index]
        and uses.of(index, names[index])
        and any(word not in words[index] for word in other)
    ]
    order: dict[int, list[str]] = {}
    for index, notes in uses.notes_of(unsure).items():
        name, earlier = names[index], set()
        for note in notes:
            word = uses.word(note, index)
            if word == name:
                break
            earlier.add(word)
        other = list(uses.other[index])
        order[index] = [*other[: len(earlier)], name, *other[len(earlier) :]]
    return order


def _break_ties(state: State, uses: Uses, ties: dict[int, dict[str, int]]) -> None:
    for index, notes in uses.notes_of(list(ties)).items():
        needed = ties[index]
        for note in notes:
            surface = uses.word(note, index)
            if surface not in needed:
                continue
            needed[surface] -= 1
            if needed[surface] == 0:
                if surface != state.labels[index]:
                    state.set_label(index, surface)
                break
