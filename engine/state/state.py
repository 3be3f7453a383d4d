"""The folded state: memories, the concept vocabulary, and the two kinds of links.

Written links (co-occurrence counts) and taught links (learned deltas from
feedback) are kept apart so they can always be told apart; a link's weight is
their sum, never below zero.

Memories are numbered by row in log order; the numbers a read ranks by
(time, importance, valence, accesses, ...) are also kept column-wise in numpy
arrays so a read scores thousands of candidates in one vectorised step.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, MutableSequence, Sequence
from typing import Any

import numpy as np

from assocmem.engine.position import ZERO, Position, Positions
from assocmem.engine.state.cooccurrence import LINK_WINDOW, LINKED_CONCEPTS, Cooccurrence
from assocmem.engine.state.link_rule import is_taught, link_weight
from assocmem.engine.state.memory import (
    COMMON,
    CORE,
    IMPORTANT,
    SUPPLEMENT,
    Memory,
    Scope,
)
from assocmem.engine.state.memory_columns import joined_blocks, offsets_of
from assocmem.engine.state.memory_rows import LoadedMemories, MemoryIds, MemoryRows
from assocmem.engine.state.note_columns import NoteColumns
from assocmem.engine.state.postings import Postings
from assocmem.engine.state.staged_notes import Uses, count_surfaces


@dataclasses.dataclass(slots=True)
class Base:
    """The full snapshot a state was last published as (or loaded from): what a delta
    snapshot is the difference from. Never snapshotted or hashed."""

    position: Position
    rows: int
    concepts: int
    link_events: int
    counts: Any
    """The base's counts matrix (scipy CSR; the fold never mutates one in place)."""
    reduction: Any
    touched_rows: set[int] = dataclasses.field(default_factory=set)
    """Rows of the base whose importance, valence, accesses or supersession changed since."""
    touched_concepts: set[int] = dataclasses.field(default_factory=set)
    """Concepts of the base whose surfaces or label changed since."""


@dataclasses.dataclass(frozen=True, slots=True)
class Link:
    count: int
    learned: float
    changed_at: Position

    @property
    def weight(self) -> float:
        return float(link_weight(float(self.count), self.learned))

    @property
    def is_taught(self) -> bool:
        return is_taught(self.learned)


JOINED_ROWS_AT_MOST = 65_536
"""The largest block the blocks a fold made are joined into: a fold that makes a small
block now and then (a worker's fold of a few new notes, or notes between ratings) leaves a
few blocks, not one per fold."""
JOINED_AT_ONCE = 8
"""Blocks of about one size joined at once: a row is copied once per eightfold growth of its
block (joined two at a time, a fold of notes rated every 50 spent a tenth of its time so)."""


def tiers_of(lengths: np.ndarray, core: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """Each concept's tier in its memory (CORE, IMPORTANT, SUPPLEMENT), memories flattened;
    `lengths`: concepts per memory, 0 <= core <= matched <= length each."""
    core = np.asarray(core, dtype=np.int64)
    matched = np.asarray(matched, dtype=np.int64)
    # Per memory, CORE `core` times, IMPORTANT `matched - core` times, then SUPPLEMENT.
    runs = np.stack([core, matched - core, np.asarray(lengths, dtype=np.int64) - matched], 1)
    tiers = np.tile(np.array([CORE, IMPORTANT, SUPPLEMENT], dtype=np.int8), len(core))
    return np.repeat(tiers, runs.ravel())


def pair(i: int, j: int) -> tuple[int, int]:
    return (i, j) if i < j else (j, i)


class Column:
    """A numpy array that grows by doubling, for per-memory numbers."""

    def __init__(self, dtype: type) -> None:
        self._data = np.zeros(16, dtype=dtype)
        self._size = 0

    def append(self, value: float) -> None:
        if self._size == len(self._data):
            self._data = np.concatenate([self._data, np.zeros_like(self._data)])
        self._data[self._size] = value
        self._size += 1

    def extend(self, values: np.ndarray) -> None:
        end = self._size + len(values)
        if end > len(self._data):
            grown = np.zeros(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : end] = values
        self._size = end

    def __setitem__(self, row: int, value: float) -> None:
        self._data[row] = value

    @property
    def values(self) -> np.ndarray:
        return self._data[: self._size]


class State:
    """Mutable state owned by whoever folds into it; `fold` is its only writer.

    Nothing it holds refers back to it but weakly: the workers freeze a folded state out
    of the garbage collector's sight (workers/state/heap.py), so a state in a reference cycle
    would never be freed, and each `as_of` read or job that let one go leaked it whole."""

    links_key: Any = "links"
    """Where its link strengths are kept in `derived` (a scoped view keeps its own)."""

    def __init__(self) -> None:
        self.position: Position = ZERO
        self.rows = MemoryRows(self)
        self.memories = MemoryIds(self.rows)
        self.activity_rows: list[int] = []
        self.scoped_rows: list[int] = []
        """Rows of the memories about a user, a session or a namespace (engine/state/visibility.py)."""
        self.concepts: list[str] = []
        self.concept_index: dict[str, int] = {}
        self.surfaces: list[dict[str, int]] = []
        """Per concept, each word agents wrote for it and in how many memories (or units)."""
        self.labels: list[str] = []
        """Per concept, the word people read: the surface written most often (ties: the
        first to get there); the concept itself until a surface is written."""
        self.relabelled: dict[str, str] = {}
        """Concept -> label, for the concepts whose label is not the concept itself (what a
        read looks up for every concept it shows, without a call per concept)."""
        self.postings = Postings()
        self.note_columns = NoteColumns()
        """Checked notes staged as columns, not rows yet (engine/state/note_columns.py); empty
        outside a fold."""
        self.placed: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        """Per block of notes placed as rows and not yet indexed: its concepts, their
        lengths, core and matched; `placed_labels` holds their words."""
        self.placed_labels: list[dict[str, str]] = []
        self.placed_from = 0
        """The first row `placed` holds."""
        self.counts = Cooccurrence()
        self.learned: dict[int, dict[int, float]] = {}
        self.learned_at: dict[tuple[int, int], Position] = {}
        self.learned_version = 0
        self.private_learned: dict[tuple[int, int], dict[Scope, float]] = {}
        """Per taught link, the share of its delta that feedback in each scope other than
        the common one gave (engine/state/scoped_links.py): `learned` is their sum with the common
        share, consolidation scales them alike."""
        self.deleted: dict[int, Position] = {}
        """Rows of deleted memories -> the position of their deletion (memory.deleted): in
        no read, listing or link."""
        self.memory_links: dict[tuple[int, int], tuple[float, Position]] = {}
        """Taught links between stream neighbours: (match row, neighbour row) -> the learned
        delta (0 or more: ratings never unlearn their contiguity) and the position of its
        last change (engine/state/stream.py)."""
        self.private_units: list[tuple[Scope, list[int]]] = []
        """Concepts of each document unit ingested in a scope other than the common one (a
        memory's links come from its concepts; a unit is not kept otherwise)."""
        self.documents = 0
        self.consolidated_at = 0.0
        """Unix time the last links.consolidated event decided at (0: never consolidated)."""
        self.link_events = Positions()
        """Positions of the folded events that may move a link and are not memory rows
        (ratings, consolidations, documents), ascending: where an audit finds them
        (engine/history/link_index.py)."""
        self.base: Base | None = None
        """Set when the state is published or loaded as a full snapshot (engine/snapshot/delta.py)."""
        self.level: Base | None = None
        """Set when the state is published or loaded as a delta of `base`: the base of the
        smaller deltas published after it (None since the full snapshot, if none yet)."""
        self.derived: dict[Any, object] = {}
        """Views recomputed from the state (link strengths, ...): never snapshotted or hashed."""
        self.ts = Column(np.float64)
        self.importance = Column(np.int8)
        self.valence = Column(np.float64)
        self.accesses = Column(np.int32)
        self.alive = Column(np.bool_)
        """False once superseded."""
        self.length = Column(np.int16)
        """Concepts a memory is matched by (its core + important tiers)."""

    def intern(self, concept: str) -> int:
        index = self.concept_index.get(concept)
        if index is None:
            index = len(self.concepts)
            self.concepts.append(concept)
            self.concept_index[concept] = index
            self.surfaces.append({})
            self.labels.append(concept)
            self.postings.grow(index + 1)
            self.counts.grow(index + 1)
        return index

    def intern_all(self, concepts: list[str]) -> None:
        """`intern` for many new, distinct concepts at once (loading a snapshot)."""
        fresh = [c for c in concepts if c not in self.concept_index]
        if len(set(fresh)) != len(concepts):
            for concept in concepts:
                self.intern(concept)
            return
        self._append_concepts(fresh)

    def _append_concepts(self, fresh: list[str]) -> None:
        """Intern `fresh`, distinct concepts the state does not know."""
        index, start = self.concept_index, len(self.concepts)
        for number, concept in enumerate(fresh, start):  # update(zip(...)): twice the time
            index[concept] = number  # of a fold's one or two at a time
        self.concepts += fresh
        assert len(index) == len(self.concepts), "the concepts were new and distinct"
        self.surfaces += [{} for _ in fresh]
        self.labels += fresh
        self.postings.grow(len(self.concepts))
        self.counts.grow(len(self.concepts))

    def note_surfaces(self, indices: list[int], labels: dict[str, str]) -> None:
        """One more use of each concept's surface (its label in `labels`, else itself)."""
        for index in indices:
            concept = self.concepts[index]
            surface = labels.get(concept, concept)
            counts = self.surfaces[index]
            counts[surface] = counts.get(surface, 0) + 1
            self.touch_concept(index)
            if counts[surface] > counts.get(self.labels[index], 0):
                self.set_label(index, surface)

    def set_label(self, index: int, label: str) -> None:
        self.touch_concept(index)
        self.labels[index] = label
        concept = self.concepts[index]
        if label == concept:
            self.relabelled.pop(concept, None)
        else:
            self.relabelled[concept] = label

    def label(self, concept: str) -> str:
        """The word people read for `concept` (the concept itself when unknown)."""
        return self.relabelled.get(concept, concept)

    def indices_of(self, concepts: list[str] | tuple[str, ...]) -> list[int]:
        """The index of each concept, those new to the state interned in their order."""
        indices = list(map(self.concept_index.get, concepts))
        if None in indices:
            self._intern_at(concepts, indices, [n for n, i in enumerate(indices) if i is None])
        return indices  # type: ignore[return-value]

    def interned(self, concepts: list[str], found: array[int], new: tuple[int, ...]) -> array[int]:
        """`found`, each concept's index when it was looked up, with those new then (at
        `new`) now interned in their order. A concept looked up before an earlier note
        interned it is found now, not interned twice."""
        index, missing = self.concept_index, []
        for at in new:
            number = index.get(concepts[at])
            if number is None:
                missing.append(at)
            else:
                found[at] = number
        if missing:
            self._intern_at(concepts, found, missing)
        return found

    def _intern_at(
        self, concepts: Sequence[str], indices: MutableSequence[Any], missing: list[int]
    ) -> None:
        """Intern the concepts at `missing`, in their order, and write their indices there.
        A note's concepts are distinct: so are those new among them."""
        start = len(self.concepts)
        self._append_concepts([concepts[at] for at in missing])
        for number, at in enumerate(missing, start):
            indices[at] = number

    def place_notes(self) -> None:
        """The notes staged as columns (engine/state/note_columns.py) become the next rows, one
        block of them (columns and all), indexed at the next `flush`."""
        staged = self.note_columns
        if not staged:
            return
        self.note_columns = NoteColumns()
        first = len(self.rows)
        block, numbers = staged.block(first)
        self._add_rows(block, numbers)
        if not self.placed:
            self.placed_from = first
        lengths = np.diff(block.offsets)
        self.placed.append((block.concepts, lengths, block.core, block.matched))
        self.placed_labels += staged.labels
        self._join_young_blocks()

    @property
    def staged_rows(self) -> int:
        """Notes staged in any way, not indexed yet."""
        return len(self.note_columns) + len(self.placed_labels)

    def flush(self) -> None:
        """Index the staged memories and count their words (engine/state/staged_notes.py)."""
        self.place_notes()
        if self.placed:
            parts, labels = self.placed, self.placed_labels
            self.placed, self.placed_labels = [], []
            concepts, lengths, core, matched = (np.concatenate(p) for p in zip(*parts, strict=True))
            offsets = offsets_of(lengths)
            tiers = tiers_of(lengths, core, matched)
            self.postings.extend(offsets, concepts, tiers, self.placed_from)
            count_surfaces(self, Uses(self, concepts, offsets, labels))

    def _join_young_blocks(self) -> None:
        """Join the last JOINED_AT_ONCE blocks into one while none of them is more than
        twice the last (and they make at most JOINED_ROWS_AT_MOST rows): however many small
        blocks folds made, a few of each size are kept, and a row is copied a few times."""
        blocks = self.rows.blocks()
        while len(blocks) >= JOINED_AT_ONCE:
            last = blocks[-JOINED_AT_ONCE:]
            if max(map(len, last)) > 2 * len(last[-1]) or sum(map(len, last)) > JOINED_ROWS_AT_MOST:
                return
            self.rows.join_last(JOINED_AT_ONCE, joined_blocks(last))

    def load_memories(self, block: LoadedMemories, numbers: dict[str, np.ndarray]) -> None:
        """Register and index a snapshot's memories as columns (no Memory object each):
        `numbers` holds their ts, importance, valence and accesses."""
        self.flush()
        first = len(self.rows)
        self._add_rows(block, numbers)
        lengths = np.diff(block.offsets)
        tiers = tiers_of(lengths, block.core, block.matched)
        self.postings.extend(block.offsets, block.concepts, tiers, first)

    def _add_rows(self, block: LoadedMemories, numbers: dict[str, np.ndarray]) -> None:
        """The block's rows after the last, with their columns; not indexed."""
        first = len(self.rows)
        self.rows.load(block)
        self.memories.load(block)
        count = len(block)
        if "activity" in block.kinds:
            activities = np.flatnonzero(block.kind == block.kinds.index("activity"))
            self.activity_rows.extend((activities + first).tolist())
        scoped = (block.user >= 0) | (block.session >= 0) | (block.namespace >= 0)
        self.scoped_rows.extend((np.flatnonzero(scoped) + first).tolist())
        self.ts.extend(numbers["ts"])
        self.importance.extend(numbers["importance"])
        self.valence.extend(numbers["valence"])
        self.accesses.extend(numbers["accesses"])
        alive = np.ones(count, dtype=np.bool_)
        alive[list(block.superseded_by)] = False
        self.alive.extend(alive)
        self.length.extend(np.maximum(block.matched, 1).astype(np.int16))

    def set_valence(self, memory: Memory, value: float) -> None:
        memory.valence = value
        self._touch_row(memory.row)
        self.valence[memory.row] = value

    def set_importance(self, memory: Memory, value: int) -> None:
        memory.importance = value
        self._touch_row(memory.row)
        self.importance[memory.row] = value

    def add_accesses(self, memory: Memory, hits: int) -> None:
        memory.accesses += hits
        self._touch_row(memory.row)
        self.accesses[memory.row] = memory.accesses

    def supersede(self, memory: Memory, by: str) -> None:
        memory.superseded_by = by
        self._touch_row(memory.row)
        self.alive[memory.row] = False

    def delete_row(self, row: int, position: Position) -> None:
        """Take the memory at `row` out of reads and its written links off the counts."""
        self.deleted[row] = position
        self._touch_row(row)
        self.alive[row] = False
        linked = self.rows.linked(row, LINKED_CONCEPTS)
        self.counts.remove_window(linked, LINK_WINDOW, len(self.concepts))
        # feedback unlearns what was written, no more: with the count gone, so is what
        # was unlearned of it (a link is never below nothing)
        for i in sorted({int(c) for c in linked}):
            for j, learned in sorted(self.learned.get(i, {}).items()):
                floor = -float(self.counts.count(i, j))
                if learned < floor:
                    self.set_learned(i, j, floor, position)
        if self.rows.scope(row) != COMMON:
            self.derived.pop("scoped_counts", None)  # recounted without it

    def present(self, rows: np.ndarray) -> np.ndarray:
        """Per row, whether it is a memory reads may show: not deleted."""
        keep = np.ones(len(rows), dtype=bool)
        if self.deleted:
            keep &= ~np.isin(rows, np.fromiter(self.deleted, np.int64, len(self.deleted)))
        return keep

    def supersede_row(self, row: int, by: str) -> None:
        """`supersede` the memory at `row`, without making it an object if it is not one."""
        memory = self.rows.made(row)
        if memory is not None:
            self.supersede(memory, by)
            return
        self.rows.set_superseded(row, by)
        self._touch_row(row)
        self.alive[row] = False

    def restore_row(
        self, row: int, importance: int, valence: float, accesses: int, superseded_by: str | None
    ) -> None:
        """Set the numbers and the supersession of the memory at `row` (a delta snapshot's
        changed rows), without making it an object if it is not one."""
        memory = self.rows.made(row)
        if memory is not None:
            self.set_importance(memory, importance)
            self.set_valence(memory, valence)
            self.add_accesses(memory, accesses - memory.accesses)
        else:
            self._touch_row(row)
            self.importance[row] = importance
            self.valence[row] = valence
            self.accesses[row] = accesses
        if superseded_by is not None and self.rows.superseded_by(row) != superseded_by:
            self.supersede_row(row, superseded_by)

    def _touch_row(self, row: int) -> None:
        for mark in (self.base, self.level):
            if mark is not None and row < mark.rows:
                mark.touched_rows.add(row)

    def touch_concept(self, index: int) -> None:
        """Record a change of the concept's surfaces or label for the next delta."""
        for mark in (self.base, self.level):
            if mark is not None and index < mark.concepts:
                mark.touched_concepts.add(index)

    def touch_concepts(self, indices: Iterable[int]) -> None:
        if self.base is None and self.level is None:
            return
        indices = list(indices)
        for mark in (self.base, self.level):
            if mark is not None:
                mark.touched_concepts.update(i for i in indices if i < mark.concepts)

    def mark_base(self) -> None:
        """Record the state as it is now as the base of the next delta snapshots (a full
        snapshot of it is published, or it was loaded from one)."""
        self.base = self._mark()
        self.level = None

    def mark_level(self) -> None:
        """Record the state as it is now as the base of the next small deltas (a delta of
        `base` is published, or the state was loaded from one)."""
        self.level = self._mark()

    def drop_marks(self) -> None:
        """Forget the bases (they hold counts matrices): for a state that never publishes."""
        self.base = self.level = None

    def _mark(self) -> Base:
        return Base(
            self.position,
            len(self.rows),
            len(self.concepts),
            len(self.link_events),
            self.counts.matrix(),
            self.counts.reduction(),
        )

    def link(self, i: int, j: int) -> Link:
        learned_at = self.learned_at.get(pair(i, j), ZERO)
        written_at = self.last_together(i, j)
        return Link(
            count=self.counts.count(i, j),
            learned=self.learned.get(i, {}).get(j, 0.0),
            changed_at=max(learned_at, written_at),
        )

    def last_together(self, i: int, j: int) -> Position:
        """Position of the newest memory carrying both concepts (ZERO if none)."""
        both = self.together(i, j, 1)
        return Position.parse(self.rows[both[0]].id) if both else ZERO

    def together(self, i: int, j: int, limit: int) -> list[int]:
        """Rows of the newest `limit` memories carrying both concepts, newest first.

        Postings are ascending, so this walks the shorter one from its end in blocks and
        binary-searches the longer: a few microseconds even for the commonest concepts.
        """
        a, b = self.postings.of(i)[0], self.postings.of(j)[0]
        if len(a) > len(b):
            a, b = b, a
        found: list[int] = []
        end = len(a)
        while end > 0 and len(found) < limit and len(b):
            start = max(0, end - 256)
            block = a[start:end]
            at = np.minimum(np.searchsorted(b, block), len(b) - 1)
            found += block[b[at] == block][::-1].tolist()
            end = start
        return found[:limit]

    def memories_with(self, concept: str) -> list[str]:
        index = self.concept_index.get(concept)
        if index is None:
            return []
        return [self.rows[r].id for r in self.postings.of(index)[0].tolist()]

    def set_learned(
        self, i: int, j: int, value: float, position: Position, scope: Scope = COMMON
    ) -> None:
        """The taught delta of a link is now `value`; its change is `scope`'s share."""
        if scope != COMMON:
            shares = self.private_learned.setdefault(pair(i, j), {})
            shares[scope] = shares.get(scope, 0.0) + value - self.learned.get(i, {}).get(j, 0.0)
        for a, b in ((i, j), (j, i)):
            self.learned.setdefault(a, {})[b] = value
        self.learned_at[pair(i, j)] = position
        self.learned_version += 1

    def load_learned(
        self, first: list[int], second: list[int], values: list[float], at: list[Position]
    ) -> None:
        """The taught links are now these (`set_learned` of each pair, common to all scopes),
        and no others: a snapshot's, loaded in bulk."""
        learned: dict[int, dict[int, float]] = {}
        for i, j, value in zip(first, second, values, strict=True):
            learned.setdefault(i, {})[j] = value
            learned.setdefault(j, {})[i] = value
        self.learned = learned
        self.learned_at = dict(zip(map(pair, first, second), at, strict=True))
        self.learned_version += 1

    def rescale_learned(self, i: int, j: int, value: float) -> None:
        """The taught delta is now `value` (consolidation), each scope's share scaled alike."""
        before = self.learned.get(i, {}).get(j, 0.0)
        shares = self.private_learned.get(pair(i, j))
        if shares:
            factor = value / before if before else 0.0
            for scope in shares:
                shares[scope] *= factor
        self.set_learned(i, j, value, self.learned_at[pair(i, j)])

    def drop_learned(self, i: int, j: int) -> None:
        self.private_learned.pop(pair(i, j), None)
        for a, b in ((i, j), (j, i)):
            row = self.learned.get(a)
            if row is not None:
                row.pop(b, None)
                if not row:
                    del self.learned[a]
        self.learned_at.pop(pair(i, j), None)
        self.learned_version += 1

    def written_links(self) -> int:
        return self.counts.matrix().nnz // 2

    def taught_links(self) -> int:
        return sum(1 for row in self.learned.values() for v in row.values() if v) // 2
