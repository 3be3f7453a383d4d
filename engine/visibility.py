"""Which memories a read may see, from the scopes of the request and of each memory.

- A namespace is a partition: a read sees the memories of its own namespace only (none
  named: the tenant's common memories).
- A memory about a user is that user's: a read about another user, or about nobody, does
  not see it. Memories about nobody are shared by every user's reads.
- A read in a session sees that session's memories and those of no session; a read in no
  session sees every session's.
- An admin key that names no scope sees everything of its tenant.

The agent that wrote a memory does not hide it: agents of a tenant share what they learn
within these scopes. Links follow the same rule (engine/scoped_links.py): a read follows
the links written or taught in the scopes whose memories it sees.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .state import Memory, Scope, State, scope_of


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
    """Which of `rows` the read may see: one look at each memory that has a scope, the rest
    (about nobody, in no session or namespace) seen by every read of no namespace."""
    if visibility.everything:
        return np.ones(len(rows), dtype=bool)
    seen = np.full(len(rows), visibility.namespace is None)
    if state.scoped_rows:
        for k in np.flatnonzero(np.isin(rows, state.scoped_rows)):
            seen[k] = visibility.sees(state.rows[int(rows[k])])
    return seen
