"""Who is asking: the tenant whose memory it is, the agent acting, whom it is about, and
what its credential allows.

Every command and query of the application takes one. It comes from the caller's
credential at the edge, never from a request body or a model's tool arguments.
"""

from __future__ import annotations

import dataclasses

READ = "read"
"""Read, chain, graph, activities, state, audits and replays of the tenant."""
WRITE = "write"
"""Append memories, activities, documents and importance changes."""
FEEDBACK = "feedback"
"""Rate answers (teaches links)."""
ADMIN = "admin"
"""Jobs, consolidation, archive, dead letters, and the tenant's keys."""
PERMISSIONS = (READ, WRITE, FEEDBACK, ADMIN)
AGENT_PERMISSIONS = (READ, WRITE, FEEDBACK)
"""What a key is given unless its creator names the permissions."""


@dataclasses.dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    agent: str
    user: str | None = None
    permissions: frozenset[str] = frozenset(PERMISSIONS)
    """In-process callers (jobs, tests) may do everything; a key carries its own."""
    operator: bool = False
    """May manage the keys of every tenant (the key `assocmem up` makes on first start)."""
    key: str | None = None
    """The id of the API key the principal came from; its rates are limited per key."""
    session: str | None = None
    """The conversation or run the request belongs to (beside `user`, whom it is about)."""
    namespace: str | None = None
    """A partition of the tenant's memory the caller names (a project, a team)."""

    def may(self, permission: str) -> bool:
        return permission in self.permissions
