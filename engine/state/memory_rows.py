"""The state's memories by row and by id, the rows a snapshot loaded kept as columns.

Loading a snapshot makes no Memory object per memory (at a million memories that was
most of a cold start): the rows stay in numpy arrays, lists and one UTF-8 buffer of texts
(`LoadedMemories`), and a row becomes a Memory the first time something asks for it.
What can change about a memory is kept where both kinds of row have it: its numbers in
the state's columns (importance, valence, accesses, alive), its supersession in its
object or, for a row that is not one, in its block (`State.supersede_row`).
"""

from __future__ import annotations

import bisect
import dataclasses
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from assocmem.engine.state.memory import Memory, Scope
    from assocmem.engine.state.packed_text import PackedText
    from assocmem.engine.state.state import State


class Fixed(NamedTuple):
    """What never changes about a memory, read without making it an object."""

    id: str
    text: bytes
    """UTF-8."""
    agent: str
    kind: str
    scope: Scope


@dataclasses.dataclass(slots=True)
class LoadedMemories:
    """Memories as a snapshot holds them, rows `start` to `start + len(ids)`, by local row:
    what never changes about a memory (its numbers are in the state's columns)."""

    start: int
    ids: list[str]
    text_bytes: memoryview | PackedText
    """Every row's text in UTF-8, one after the other (`text_offsets` tells where each
    starts): decoded when asked for, and written out again as they are (a view of the
    snapshot's bytes, which are not copied, or the frames they are stored in)."""
    text_offsets: np.ndarray
    concepts: np.ndarray
    """Every row's concept indices, one after the other (`offsets` tells where each starts)."""
    offsets: np.ndarray
    core: np.ndarray
    matched: np.ndarray
    agent: np.ndarray
    """Per row a number into `agents` (the same for user, session, namespace, kind: -1 for
    none)."""
    agents: list[str]
    user: np.ndarray
    users: list[str]
    session: np.ndarray
    sessions: list[str]
    namespace: np.ndarray
    namespaces: list[str]
    kind: np.ndarray
    kinds: list[str]
    meta: dict[int, dict[str, Any]]
    superseded_by: dict[int, str]
    """Who supersedes a row that is not an object (an object tells for itself)."""

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, local: int) -> str:
        return str(
            self.text_bytes[self.text_offsets[local] : self.text_offsets[local + 1]], "utf-8"
        )

    def indices(self, local: int) -> np.ndarray:
        return self.concepts[self.offsets[local] : self.offsets[local + 1]]

    def fixed(self, local: np.ndarray) -> list[Fixed]:
        """`MemoryRows.fixed` of these local rows, in bulk."""
        with_none = [[*table, None] for table in (self.namespaces, self.users, self.sessions)]
        namespaces, users, sessions = with_none  # code -1: the None at the end
        starts, ends = self.text_offsets[local].tolist(), self.text_offsets[local + 1].tolist()
        data, ids, agents, kinds = self.text_bytes, self.ids, self.agents, self.kinds
        return [
            Fixed(
                ids[n],
                bytes(data[start:end]),
                agents[a],
                kinds[k],
                (namespaces[s], users[u], sessions[e]),
            )
            for n, start, end, a, k, s, u, e in zip(
                local.tolist(),
                starts,
                ends,
                self.agent[local].tolist(),
                self.kind[local].tolist(),
                self.namespace[local].tolist(),
                self.user[local].tolist(),
                self.session[local].tolist(),
                strict=True,
            )
        ]

    def scope(self, local: int) -> Scope:
        return (
            _named(self.namespaces, self.namespace[local]),
            _named(self.users, self.user[local]),
            _named(self.sessions, self.session[local]),
        )

    def stream(self, local: int) -> tuple[str, Scope]:
        return self.agents[self.agent[local]], self.scope(local)


def _named(table: list[str], code: Any) -> str | None:
    return None if code < 0 else table[code]


class MemoryRows:
    """The memories in row (log) order, as a sequence of Memory objects."""

    def __init__(self, state: State) -> None:
        self._state = weakref.proxy(state)
        """Not the state itself: a state that is let go must go by reference counting alone
        (`State`)."""
        self._objects: list[Memory | None] = []
        self._blocks: list[LoadedMemories] = []
        self._starts: list[int] = []

    def __len__(self) -> int:
        return len(self._objects)

    def __getitem__(self, row: int) -> Memory:
        found = self._objects[row]
        if found is None:
            if row < 0:
                row += len(self._objects)
            found = self._objects[row] = self._made(row)
        return found

    def __iter__(self) -> Iterator[Memory]:
        return map(self.__getitem__, range(len(self._objects)))

    def __reversed__(self) -> Iterator[Memory]:
        return map(self.__getitem__, range(len(self._objects) - 1, -1, -1))

    def slice(self, start: int, end: int | None = None) -> list[Memory]:
        return list(map(self.__getitem__, range(start, len(self) if end is None else end)))

    def load(self, block: LoadedMemories) -> None:
        """Add the block's rows after the last one, made into objects when asked for."""
        assert block.start == len(self._objects), "a block starts at the next row"
        self._blocks.append(block)
        self._starts.append(block.start)
        self._objects.extend([None] * len(block))

    def join_last(self, count: int, joined: LoadedMemories) -> None:
        """Keep the last `count` blocks as `joined`, the same rows in one block."""
        assert joined.start == self._starts[-count], "joins the last blocks"
        assert len(joined) == sum(map(len, self._blocks[-count:]))
        del self._blocks[-count + 1 :], self._starts[-count + 1 :]
        self._blocks[-1] = joined

    def blocks(self) -> list[LoadedMemories]:
        return self._blocks

    def made(self, row: int) -> Memory | None:
        """The row's memory if it is an object already, else None."""
        return self._objects[row]

    def set_superseded(self, row: int, by: str) -> None:
        """Supersede a row that is not an object yet (its block then tells who by)."""
        assert self._objects[row] is None, "an object is superseded through itself"
        block, local = self._locate(row)
        block.superseded_by[local] = by

    def id_of(self, row: int) -> str:
        found = self._objects[row]
        if found is not None:
            return found.id
        block, local = self._locate(row)
        return block.ids[local]

    def superseded_by(self, row: int) -> str | None:
        found = self._objects[row]
        if found is not None:
            return found.superseded_by
        block, local = self._locate(row)
        return block.superseded_by.get(local)

    def fixed(self, rows: np.ndarray) -> list[Fixed]:
        """What never changes about the memories of `rows` (ascending), without making
        objects of them."""
        found: list[Fixed] = []
        for block in self._blocks:
            lo, hi = np.searchsorted(rows, [block.start, block.start + len(block)]).tolist()
            found += block.fixed(rows[lo:hi] - block.start)
        return found

    def scope(self, row: int) -> Scope:
        """The row's scope, without making it an object."""
        found = self._objects[row]
        if found is not None:
            return (found.namespace, found.user, found.session)
        block, local = self._locate(row)
        return block.scope(local)

    def meta(self, row: int) -> dict[str, Any] | None:
        """The row's kind's own fields (an activity's category, tags and source; a memory's
        metadata), without making it an object."""
        found = self._objects[row]
        if found is not None:
            return found.meta
        block, local = self._locate(row)
        return block.meta.get(local)

    def stream(self, row: int) -> tuple[str, Scope]:
        """Who wrote the row, and in which scope: its stream, without making it an object."""
        found = self._objects[row]
        if found is not None:
            return found.agent, (found.namespace, found.user, found.session)
        block, local = self._locate(row)
        return block.stream(local)

    def linked(self, row: int, limit: int) -> list[int]:
        """The indices of the row's first concepts, up to its matched ones and `limit`."""
        found = self._objects[row]
        index = self._state.concept_index
        if found is not None:
            return list(map(index.__getitem__, found.concepts[: min(found.matched, limit)]))
        block, local = self._locate(row)
        return block.indices(local)[: min(int(block.matched[local]), limit)].tolist()

    def _locate(self, row: int) -> tuple[LoadedMemories, int]:
        block = self._blocks[bisect.bisect_right(self._starts, row) - 1]
        return block, row - block.start

    def _made(self, row: int) -> Memory:
        from assocmem.engine.state.memory import Memory

        block, local = self._locate(row)
        state = self._state
        memory = Memory(
            block.ids[local],
            block.text(local),
            tuple(map(state.concepts.__getitem__, block.indices(local).tolist())),
            block.agents[block.agent[local]],
            float(state.ts.values[row]),
            int(state.importance.values[row]),
            _named(block.users, block.user[local]),
            float(state.valence.values[row]),
            int(block.core[local]),
            int(block.matched[local]),
            block.kinds[block.kind[local]],
            block.meta.get(local),
        )
        memory.accesses = int(state.accesses.values[row])
        memory.superseded_by = block.superseded_by.get(local)
        memory.row = row
        memory.session = _named(block.sessions, block.session[local])
        memory.namespace = _named(block.namespaces, block.namespace[local])
        return memory


class MemoryIds(Mapping[str, "Memory"]):
    """The memories by id (a position), as a read-only mapping; ids of loaded rows are
    indexed when first looked up."""

    def __init__(self, rows: MemoryRows) -> None:
        self._rows = rows
        self._by_id: dict[str, int] = {}
        self._unindexed: list[tuple[list[str], int]] = []
        """The ids of loaded blocks not looked up yet, and their first rows (not the blocks:
        the rows may be joined into another block meanwhile)."""

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[str]:
        return map(self._rows.id_of, range(len(self._rows)))

    def __contains__(self, memory_id: object) -> bool:
        return self._row(memory_id) is not None

    def __getitem__(self, memory_id: str) -> Memory:
        row = self._row(memory_id)
        if row is None:
            raise KeyError(memory_id)
        return self._rows[row]

    def get(self, memory_id: str, default: Memory | None = None) -> Memory | None:  # type: ignore[override]
        row = self._row(memory_id)
        return default if row is None else self._rows[row]

    def row_of(self, memory_id: str) -> int | None:
        """The row of the memory with this id (None if there is none), without making it
        an object."""
        return self._row(memory_id)

    def rows_of(self, memory_ids: list[str]) -> list[int | None]:
        """`row_of` of each id, in one pass in C (a consolidation merges up to millions)."""
        return list(map(self._indexed().get, memory_ids))

    def add(self, memory: Memory) -> None:
        self._by_id[memory.id] = memory.row

    def load(self, block: LoadedMemories) -> None:
        self._unindexed.append((block.ids, block.start))

    def _row(self, memory_id: object) -> int | None:
        return self._indexed().get(memory_id)  # type: ignore[call-overload]

    def _indexed(self) -> dict[str, int]:
        """Id -> row, the loaded blocks' ids indexed first."""
        if self._unindexed:
            for ids, start in self._unindexed:
                self._by_id.update(zip(ids, range(start, start + len(ids)), strict=True))
            self._unindexed.clear()
        return self._by_id
