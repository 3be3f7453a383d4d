"""Which memories a read may see, from the scopes of the request and of each memory.

- A namespace is a partition: a read sees the memories of its own namespace only (none
  named: the tenant's common memories).
- A memory about a user is that user's: a read about another user, or about nobody, does
  not see it. Memories about nobody are shared by every user's reads.
- A read in a session sees that session's memories and those of no session; a read in no
  session sees every session's.
- An admin key that names no scope sees everything of its tenant.

The agent that wrote a memory does not hide it: agents of a tenant share what they learn
within these scopes. Links follow the same rule (engine/state/scoped_links.py): a read follows
the links written or taught in the scopes whose memories it sees.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np

from assocmem.engine.state.memory import COMMON, Memory, Scope, scope_of
from assocmem.engine.state.state import State


@dataclasses.dataclass(frozen=True, slots=True)
class Visibility:
    user: str | None = None
    session: str | None = None
    namespace: str | None = None
    everything: bool = False
    """An admin key naming no scope."""

    def sees(self, memory: Memory) -> bool:
        return self.sees_scope(scope_of(memory))

    def sees_scope(self, scope: Scope) -> bool:
        """Whether the memories of `scope` (namespace, user, session) are seen."""
        namespace, user, session = scope
        if self.everything:
            return True
        if namespace != self.namespace:
            return False
        if user is not None and user != self.user:
            return False
        return self.session is None or session in (None, self.session)


def visibility_of(
    user: str | None, session: str | None, namespace: str | None, admin: bool
) -> Visibility:
    scoped = user is not None or session is not None or namespace is not None
    return Visibility(user, session, namespace, everything=admin and not scoped)


def visible(state: State, visibility: Visibility, rows: np.ndarray) -> np.ndarray:
    """Which of `rows` the read may see, in one numpy step over their scopes."""
    if visibility.everything:
        return np.ones(len(rows), dtype=bool)
    if not state.scoped_rows:
        return np.full(len(rows), visibility.namespace is None)
    index = scope_index(state)
    return index.seen(visibility)[index.ids[np.asarray(rows, dtype=np.int64)]]


SEEN_KEPT = 256
"""Visibilities whose seen scopes an index keeps, the least recently used dropped."""


class ScopeIndex:
    """Per row, which scope its memory is in: -1 for the common one, else a number into
    `scopes` (a view derived from the memories: never snapshotted or hashed)."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int32)
        self.scopes: list[Scope] = []
        self._numbers: dict[Scope, int] = {}
        self._counted = 0
        """How many of `State.scoped_rows` are numbered."""
        self._seen: OrderedDict[Visibility, np.ndarray] = OrderedDict()

    def update(self, state: State) -> None:
        if len(self.ids) < len(state.rows):
            grown = np.full(max(len(state.rows), 2 * len(self.ids)), -1, dtype=np.int32)
            grown[: len(self.ids)] = self.ids
            self.ids = grown
        for row in state.scoped_rows[self._counted :]:
            scope = state.rows.scope(row)
            number = self._numbers.get(scope)
            if number is None:
                number = self._numbers[scope] = len(self.scopes)
                self.scopes.append(scope)
            self.ids[row] = number
        self._counted = len(state.scoped_rows)

    def seen(self, visibility: Visibility) -> np.ndarray:
        """Per scope number, whether `visibility` sees it; last, the common scope (-1)."""
        found = self._seen.get(visibility)
        if found is None or len(found) != len(self.scopes) + 1:
            marks = [visibility.sees_scope(scope) for scope in self.scopes]
            found = np.array([*marks, visibility.sees_scope(COMMON)], dtype=bool)
            self._seen[visibility] = found
            if len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
        self._seen.move_to_end(visibility)
        return found


def scope_index(state: State) -> ScopeIndex:
    """The state's scope index, brought up to its rows."""
    index = state.derived.get("scope_index")
    if not isinstance(index, ScopeIndex):
        index = state.derived["scope_index"] = ScopeIndex()
    index.update(state)
    return index
