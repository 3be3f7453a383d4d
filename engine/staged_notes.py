"""Notes the fold has registered but not yet indexed.

A run of notes gets its postings, columns and word counts in a few bulk steps at the
end instead of a Python step per concept of every note. The fold flushes them before
any event whose handler reads indexed notes (`EventType.keeps_staged`), every
STAGED_AT_MOST notes and at its end, so no reader ever sees a staged note.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .state import Memory, State


class _Numbers(dict[str, int]):
    """Each key's number, given in order of first look-up."""

    def __missing__(self, key: str) -> int:
        number = self[key] = len(self)
        return number


@dataclasses.dataclass(frozen=True, slots=True)
class Uses:
    """Uses of words for concepts, in order: each one's concept index and its word (the
    surface), as a number into `words`."""

    indices: np.ndarray
    numbers: np.ndarray
    words: list[str]

    @classmethod
    def of(cls, indices: Sequence[int], surfaces: Sequence[str]) -> Uses:
        if len(indices) != len(surfaces):
            raise ValueError(f"{len(indices)} indices but {len(surfaces)} surfaces")
        numbers = _Numbers()
        counted = np.fromiter(map(numbers.__getitem__, surfaces), np.int64, len(surfaces))
        return cls(np.fromiter(indices, np.int64, len(indices)), counted, list(numbers))


class StagedNotes:
    __slots__ = ("memories", "indices", "_flat", "_numbers", "_words")

    def __init__(self) -> None:
        self.memories: list[Memory] = []
        self.indices: list[list[int]] = []
        self._flat = array("q")
        """Every use's concept index, note after note."""
        self._numbers = array("q")
        """Every use's word (its label, else the concept), numbered in `_words`: looked up
        as each note is staged, while its strings are in the CPU's cache. Counted at the
        flush as (index, word) tuples, the uses took a third of the fold of commit
        messages, most of it fetching a million strings from memory again."""
        self._words = _Numbers()

    def __len__(self) -> int:
        return len(self.memories)

    def add(self, memory: Memory, indices: list[int], labels: dict[str, str]) -> None:
        concepts = memory.concepts
        self.memories.append(memory)
        self.indices.append(indices)
        self._flat.extend(indices)
        words = map(labels.get, concepts, concepts) if labels else concepts
        self._numbers.extend(map(self._words.__getitem__, words))

    def take(self) -> tuple[list[Memory], list[list[int]], Uses]:
        """The staged memories, their indices and their uses of words; empties."""
        uses = Uses(
            np.frombuffer(self._flat, dtype=np.int64),
            np.frombuffer(self._numbers, dtype=np.int64),
            list(self._words),
        )
        taken = self.memories, self.indices, uses
        self.memories, self.indices = [], []
        self._flat, self._numbers, self._words = array("q"), array("q"), _Numbers()
        return taken


def count_surfaces(state: State, uses: Uses) -> None:
    """`State.note_surfaces` for many uses at once, with the same counts, labels and order.

    One use at a time, a concept's label is always the first of its surfaces to reach the
    highest count (it changes only when another one passes it), so the label after many
    uses follows from the counts, and from the order only when several surfaces tie.
    """
    labels, words = state.labels, state.surfaces
    # In order of first use, so new surfaces enter each concept's counts in that order too
    added = _counted(uses)
    moved: dict[int, None] = {}
    for (index, surface), count in added.items():
        counts = words[index]
        counts[surface] = counts.get(surface, 0) + count
        if surface != labels[index]:
            moved[index] = None
    state.touch_concepts(i for i, _ in added)
    ties: dict[int, dict[str, int]] = {}
    for index in moved:
        counts, label = words[index], labels[index]
        top = max(counts.values())
        if top == counts.get(label, 0) - added.get((index, label), 0):
            continue  # nothing passed the label
        leaders = [s for s, n in counts.items() if n == top]
        if len(leaders) == 1:
            if leaders[0] != label:
                state.set_label(index, leaders[0])
        else:  # the use of each that reached `top`: the first of them wins
            ties[index] = {s: top - (counts[s] - added[index, s]) for s in leaders}
    if ties:
        _break_ties(state, uses, ties)


def _counted(uses: Uses) -> dict[tuple[int, str], int]:
    """The count of each (index, surface) pair, in order of first use, as a Counter of the
    pairs would give it: each pair as one number (index x words + word), counted by numpy."""
    index, number = uses.indices, uses.numbers
    pairs = index * max(1, len(uses.words)) + number
    _, first, counts = np.unique(pairs, return_index=True, return_counts=True)
    in_order = np.argsort(first)  # no two pairs were first used at once
    first, counts = first[in_order], counts[in_order]
    words = map(uses.words.__getitem__, number[first].tolist())
    return dict(zip(zip(index[first].tolist(), words, strict=True), counts.tolist(), strict=True))


def _break_ties(state: State, uses: Uses, ties: dict[int, dict[str, int]]) -> None:
    picked = np.flatnonzero(np.isin(uses.indices, list(ties)))
    indices = uses.indices[picked].tolist()
    surfaces = map(uses.words.__getitem__, uses.numbers[picked].tolist())
    for index, surface in zip(indices, surfaces, strict=True):
        needed = ties.get(index)
        if needed is None or surface not in needed:
            continue
        needed[surface] -= 1
        if needed[surface] == 0:
            if surface != state.labels[index]:
                state.set_label(index, surface)
            del ties[index]
