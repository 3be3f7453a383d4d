"""A memory as the state holds it (a note or an activity), the tiers of its concepts, and
the scope it is about."""

from __future__ import annotations

import dataclasses
from typing import Any

CORE, IMPORTANT, SUPPLEMENT = 0, 1, 2
"""Concept tiers of a memory: core terms drive expansion and chains, core + important drive
matching, supplement terms only add a verification bonus."""


@dataclasses.dataclass(slots=True)
class Memory:
    id: str
    text: str
    concepts: tuple[str, ...]
    """Ranked: the first `core` are core, up to `matched` important, the rest supplement."""
    agent: str
    ts: float
    importance: int
    user: str | None = None
    valence: float = 0.0
    core: int = -1
    matched: int = -1
    kind: str = "memory"
    """"memory" (memory.written) or "activity" (activity.logged)."""
    meta: dict[str, Any] | None = None
    """Activity fields: category, tags, source."""
    accesses: int = 0
    superseded_by: str | None = None
    row: int = -1
    session: str | None = None
    namespace: str | None = None

    def __post_init__(self) -> None:
        if self.core < 0:
            self.core = len(self.concepts)
        if self.matched < 0:
            self.matched = len(self.concepts)


Scope = tuple[str | None, str | None, str | None]
"""(namespace, user, session) of a memory or an event: whom it is about."""
COMMON: Scope = (None, None, None)
"""The tenant's common scope: about nobody, in no session or namespace."""


def scope_of(item: Any) -> Scope:
    """The scope of a memory or an event."""
    return (item.namespace, item.user, item.session)
