"""The rows holding each metadata value and each field value, for filters: a filter becomes a
mask over every row in a few numpy steps, so a filtered read costs about what an unfiltered
one does, however few memories pass (testing the candidates one by one cost 3 to 8 times a
read at 50,000 memories: bench/filtered_reads.py).

A derived view of the state, never snapshotted or hashed: kept in `State.derived` and
extended by the rows written since (a memory's metadata and fields never change)."""

from __future__ import annotations

from array import array
from collections import defaultdict

import numpy as np

from assocmem.engine.state.state import State

FIELD_NAMES = ("agent", "kind", "user", "session", "namespace")
"""Fields indexed like metadata keys, under FIELD + name."""
FIELD = "\0"
"""No metadata key starts with it (a key is printable text)."""

ValueKey = tuple[str, object]
"""A value as JSON tells values apart: ("s", text), ("b", flag) or ("n", number as float)."""


def value_key(value: object) -> ValueKey:
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("s", value)


class FilterIndex:
    def __init__(self) -> None:
        self.size = 0
        """Rows indexed."""
        self._rows: defaultdict[str, defaultdict[ValueKey, array[int]]] = defaultdict(
            lambda: defaultdict(lambda: array("q"))
        )
        self._joined: dict[tuple[str, ValueKey | None], np.ndarray] = {}
        """Arrays asked for since the last update: (key, value) -> rows; (key, None) -> the
        rows holding the key at all."""
        self._numbers: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def update(self, state: State) -> None:
        size = len(state.rows)
        if size == self.size:
            return
        for block in state.rows.blocks():
            lo, hi = max(block.start, self.size), block.start + len(block)
            if lo >= hi:
                continue
            for name in FIELD_NAMES:
                codes = getattr(block, name)[lo - block.start : hi - block.start]
                table = getattr(block, f"{name}s")
                for code in np.unique(codes).tolist():
                    if code >= 0:
                        rows = (np.flatnonzero(codes == code) + lo).astype(np.int64)
                        self._rows[FIELD + name][("s", table[code])].frombytes(rows.tobytes())
            for local, meta in block.meta.items():
                row = block.start + local
                if not lo <= row < hi:
                    continue
                for key, value in (meta.get("metadata") or {}).items():
                    self._rows[key][value_key(value)].append(row)
        self.size = size
        self._joined.clear()
        self._numbers.clear()

    def rows_with(self, key: str, value: object) -> np.ndarray:
        """The rows whose `key` holds `value`, ascending."""
        wanted = value_key(value)
        found = self._joined.get((key, wanted))
        if found is None:
            rows = self._rows[key].get(wanted) if key in self._rows else None
            found = np.sort(_array(rows)) if rows else np.zeros(0, dtype=np.int64)
            self._joined[(key, wanted)] = found
        return found

    def rows_having(self, key: str) -> np.ndarray:
        """The rows that hold `key` at all, ascending."""
        found = self._joined.get((key, None))
        if found is None:
            parts = [_array(rows) for rows in self._rows.get(key, {}).values()]
            found = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
            self._joined[(key, None)] = found
        return found

    def numbers(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows whose `key` holds a number, and those numbers."""
        found = self._numbers.get(key)
        if found is None:
            rows, values = [], []
            for (kind, value), held in self._rows.get(key, {}).items():
                if kind == "n":
                    joined = _array(held)
                    rows.append(joined)
                    values.append(np.full(len(joined), value, dtype=np.float64))
            found = (
                (np.concatenate(rows), np.concatenate(values))
                if rows
                else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
            )
            self._numbers[key] = found
        return found


def _array(rows: array[int]) -> np.ndarray:
    return np.frombuffer(rows, dtype=np.int64).copy()  # the array grows on: no view of it


def filter_index(state: State) -> FilterIndex:
    """The state's index, brought up to its rows."""
    index = state.derived.get("filter_index")
    if not isinstance(index, FilterIndex):
        index = state.derived["filter_index"] = FilterIndex()
    index.update(state)
    return index
