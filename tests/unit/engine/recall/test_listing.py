"""Memories listed newest first (engine/recall/listing.py): every page is what a filter of
all the memories, newest first, would cut there, whatever stretch of rows it reads at once."""

from __future__ import annotations

import dataclasses
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall import listing
from assocmem.engine.recall.listing import Filter, listed
from assocmem.engine.state.memory import Memory
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility, visibility_of
from tests.unit.engine.make_events import activity, written

AGENTS = ("planner", "coder")
USERS = (None, "alice", "bob")


def a_state(count: int) -> State:
    events = []
    for n in range(1, count + 1):
        note = written(n, [f"c{n % 3}"]) if n % 4 else activity(n, [f"c{n % 3}"])
        user = USERS[n % 3]
        events.append(dataclasses.replace(note, agent=AGENTS[n % 2], user=user))
    if count >= 3:  # the second note superseded by a later version
        later = written(count + 1, ["c9"])
        later.data["supersedes"] = [f"{2}-0"]
        events.append(later)
    return fold_from_zero(events)


def expected(state: State, seen: Visibility, where: Filter) -> list[int]:
    def matches(m: Memory) -> bool:
        return (
            seen.sees(m)
            and (where.superseded or m.superseded_by is None)
            and where.agent in (None, m.agent)
            and where.kind in (None, m.kind)
            and where.user in (None, m.user)
            and (where.since is None or m.ts >= where.since)
            and (where.until is None or m.ts < where.until)
        )

    return [m.row for m in reversed(list(state.rows)) if matches(m)]


@given(
    count=st.integers(0, 40),
    stretch=st.sampled_from([1, 3, 512]),
    limit=st.integers(1, 7),
    agent=st.sampled_from([None, *AGENTS]),
    kind=st.sampled_from([None, "memory", "activity"]),
    user=st.sampled_from(USERS),
    reader=st.sampled_from([None, "alice"]),
    since=st.sampled_from([None, 5.0]),
    until=st.sampled_from([None, 30.0]),
    superseded=st.booleans(),
)
@settings(max_examples=150, deadline=None)
def test_pages_are_the_filtered_memories_newest_first_cut_at_their_cursor(
    count: int,
    stretch: int,
    limit: int,
    agent: str | None,
    kind: str | None,
    user: str | None,
    reader: str | None,
    since: float | None,
    until: float | None,
    superseded: bool,
) -> None:
    state = a_state(count)
    seen = visibility_of(reader, None, None, admin=reader is None)
    where = Filter(agent, kind, user, None, None, since, until, superseded)
    pages: list[int] = []
    before = None
    with mock.patch.object(listing, "STRETCH", stretch):
        while True:
            page = listed(state, seen, where, before, limit)
            assert len(page) <= limit
            pages += page
            if len(page) < limit:
                break
            before = page[-1]
    assert pages == expected(state, seen, where)
