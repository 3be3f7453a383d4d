"""Memories listed newest first, filtered by who wrote them, their scope, kind and time:
what a person or an agent pages through to see what is stored, without a question.

Rows are in log order, so newest first is the rows backwards; a page ends at the row its
cursor names. The cheap tests (visibility, time, supersession) run on numpy columns a
stretch of rows at a time; the names (agent, kind, scope) are read only for the rows that
pass them, without making a Memory object of any row not listed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from assocmem.engine.recall.expiry import expired
from assocmem.engine.recall.filters import Filters, matching
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility, visible

MAX_LISTED = 1000
"""Memories on one page."""
STRETCH = 512
"""Rows tested at once, going back from the cursor."""


@dataclasses.dataclass(frozen=True, slots=True)
class Filter:
    """What a listed memory must match; None matches anything."""

    agent: str | None = None
    kind: str | None = None
    user: str | None = None
    session: str | None = None
    namespace: str | None = None
    since: float | None = None
    until: float | None = None
    """Unix seconds, `since` <= ts < `until`."""
    superseded: bool = False
    """Whether memories a later version superseded are listed too."""
    metadata: tuple[tuple[str, str], ...] = ()
    """(key, value) pairs its metadata must hold, each value as text: a string as it is, a
    number or a boolean as JSON writes it (7, 2.5, true)."""
    filters: Filters | None = None
    """Conditions on metadata and fields (engine/recall/filters.py)."""
    expired_before: float | None = None
    """Leave out the memories that expired at or before this time."""


def listed(
    state: State, visibility: Visibility, where: Filter, before: int | None, limit: int
) -> list[int]:
    """The rows of up to `limit` memories `visibility` sees and `where` matches, newest
    first, from the row before `before` (None: the last row) back."""
    found: list[int] = []
    end = len(state.rows) if before is None else before
    while end > 0 and len(found) < limit:
        start = max(0, end - STRETCH)
        rows = np.arange(end - 1, start - 1, -1, dtype=np.int64)
        keep = visible(state, visibility, rows)
        ts = state.ts.values[rows]
        if where.since is not None:
            keep &= ts >= where.since
        if where.until is not None:
            keep &= ts < where.until
        keep &= state.alive.values[rows] if not where.superseded else state.present(rows)
        if where.expired_before is not None:
            keep &= ~expired(state, where.expired_before, rows)
        candidates = rows[keep]
        if len(candidates):
            found += _named(state, where, candidates)[: limit - len(found)]
        end = start
    return found


def _named(state: State, where: Filter, rows: np.ndarray) -> list[int]:
    """Those of `rows` (descending) whose agent, kind and scope `where` asks for."""
    names = (where.agent, where.kind, where.user, where.session, where.namespace)
    if where.filters is not None:
        rows = rows[matching(state, where.filters, rows)]
    if all(name is None for name in names) and not where.metadata:
        return rows.tolist()
    order = np.argsort(rows)  # `fixed` takes rows ascending
    fixed = state.rows.fixed(rows[order])
    matched = np.zeros(len(rows), dtype=bool)
    for at, memory in zip(order.tolist(), fixed, strict=True):
        namespace, user, session = memory.scope
        matched[at] = (
            where.agent in (None, memory.agent)
            and where.kind in (None, memory.kind)
            and where.user in (None, user)
            and where.session in (None, session)
            and where.namespace in (None, namespace)
        )
    if where.metadata:
        for at, row in enumerate(rows.tolist()):
            if matched[at]:
                matched[at] = _holds((state.rows.meta(row) or {}).get("metadata"), where.metadata)
    return rows[matched].tolist()


def _holds(metadata: dict[str, object] | None, pairs: tuple[tuple[str, str], ...]) -> bool:
    return metadata is not None and all(
        key in metadata and as_text(metadata[key]) == value for key, value in pairs
    )


def as_text(value: object) -> str:
    """A metadata value as a filter names it: a string as it is, else as JSON writes it."""
    return value if isinstance(value, str) else json.dumps(value)
