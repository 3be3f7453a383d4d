"""Notes the fold has registered but not yet indexed.

A run of notes gets its postings, columns and word counts in a few bulk steps at the
end instead of a Python step per concept of every note. The fold flushes them before
any event whose handler reads indexed notes (`EventType.keeps_staged`), every
STAGED_AT_MOST notes and at its end, so no reader ever sees a staged note.

A staged note is still a Memory object: folding long runs of notes, read ahead, straight
into blocks of columns (2b1ed56, reverted) made a fold from zero slower and its peak
memory larger, the notes read ahead going cold before they were folded.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain, compress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .state import Memory, State


class StagedNotes:
    __slots__ = ("memories", "indices", "surfaces")

    def __init__(self) -> None:
        self.memories: list[Memory] = []
        self.indices: list[list[int]] = []
        self.surfaces: list[list[str] | tuple[str, ...]] = []
        """Per note, the word written for each concept (its label, else the concept)."""

    def __len__(self) -> int:
        return len(self.memories)

    def add(self, memory: Memory, indices: list[int], labels: dict[str, str]) -> None:
        concepts = memory.concepts
        self.memories.append(memory)
        self.indices.append(indices)
        self.surfaces.append(list(map(labels.get, concepts, concepts)) if labels else concepts)

    def take(self) -> tuple[list[Memory], list[list[int]], list[str], list[int]]:
        """The staged memories and indices, and every (surface, index) flattened; empties."""
        taken = (
            self.memories,
            self.indices,
            list(chain.from_iterable(self.surfaces)),
            list(chain.from_iterable(self.indices)),
        )
        self.memories, self.indices, self.surfaces = [], [], []
        return taken


def count_surfaces(state: State, surfaces: list[str], indices: list[int]) -> None:
    """`State.note_surfaces` for many uses at once, with the same counts, labels and order.

    One use at a time, a concept's label is always the first of its surfaces to reach the
    highest count (it changes only when another one passes it), so the label after many
    uses follows from the counts, and from the order only when several surfaces tie.
    """
    labels, words = state.labels, state.surfaces
    # In order of first use, so new surfaces enter each concept's counts in that order too
    added = Counter(zip(indices, surfaces, strict=True))
    moved: dict[int, None] = {}
    for (index, surface), uses in added.items():
        counts = words[index]
        counts[surface] = counts.get(surface, 0) + uses
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
        _break_ties(state, indices, surfaces, ties)


def _break_ties(
    state: State, indices: list[int], surfaces: list[str], ties: dict[int, dict[str, int]]
) -> None:
    picked = list(map(ties.__contains__, indices))
    for index, surface in zip(compress(indices, picked), compress(surfaces, picked), strict=True):
        needed = ties.get(index)
        if needed is None or surface not in needed:
            continue
        needed[surface] -= 1
        if needed[surface] == 0:
            if surface != state.labels[index]:
                state.set_label(index, surface)
            del ties[index]
