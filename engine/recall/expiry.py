"""Which memories have expired (`expires_at`, at or before the reader's clock): asked by every
read, so kept apart from the filters' index of values, which a read without a filter never
builds. Only the memories' own fields (a block's `meta`) are looked through, once, and the
rows written since as the state grows; a tenant with no expiring memory pays one length
check a read."""

from __future__ import annotations

import numpy as np

from assocmem.engine.state.state import State


class Expiries:
    def __init__(self) -> None:
        self.size = 0
        self._rows: list[int] = []
        self._at: list[float] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def update(self, state: State) -> None:
        size = len(state.rows)
        if size == self.size:
            return
        for block in state.rows.blocks():
            if block.start + len(block) <= self.size:
                continue
            for local, meta in block.meta.items():
                row = block.start + local
                if row >= self.size and "expires_at" in meta:
                    self._rows.append(row)
                    self._at.append(float(meta["expires_at"]))
        self.size = size
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            self._arrays = (np.array(self._rows, dtype=np.int64), np.array(self._at))
        return self._arrays


def expired(state: State, now: float, rows: np.ndarray) -> np.ndarray:
    """Per row of `rows`, whether its memory expired at or before `now`."""
    expiries = state.derived.get("expiries")
    if not isinstance(expiries, Expiries):
        expiries = state.derived["expiries"] = Expiries()
    expiries.update(state)
    held, at = expiries.arrays()
    if not len(held):
        return np.zeros(len(rows), dtype=bool)
    return np.isin(rows, held[at <= now])
