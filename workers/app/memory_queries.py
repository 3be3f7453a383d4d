"""Memories by id: fetched, listed, changed and deleted, each with its result type, here and nowhere
else in the workers (its route is in api/http/memory_routes.py, its client call in
api/client/calls.py, its command in api/cli/memory.py)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.memory_deleted import MEMORY_DELETED
from assocmem.engine.position import Position
from assocmem.engine.principal import ADMIN, READ, WRITE, Principal
from assocmem.engine.recall.listing import MAX_LISTED, Filter, listed
from assocmem.engine.state.memory import Memory
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility
from assocmem.workers.app.permissions import require
from assocmem.workers.app.requests import Note
from assocmem.workers.app.results import Written
from assocmem.workers.errors import InvalidRequest, Superseded, UnknownMemory
from assocmem.workers.jobs.erasure import MEMORY, Subject
from assocmem.workers.jobs.job_list import JobInfo


@dataclasses.dataclass(frozen=True, slots=True)
class Found:
    """One memory, in the state served at `position`."""

    position: Position
    memory: Memory
    labels: Mapping[str, str]
    """Concept -> the word its writers used for it, where that is not the concept itself."""


@dataclasses.dataclass(frozen=True, slots=True)
class Listing:
    """A page of memories, newest first, in the state served at `position`."""

    position: Position
    memories: list[Memory]
    labels: Mapping[str, str]
    cursor: str | None
    """The id to list on from for the next page; None after the last."""


@dataclasses.dataclass(frozen=True, slots=True)
class Deleted:
    id: str
    position: Position | None
    """Of the memory.deleted event appended (None: it was deleted before)."""
    erasure: JobInfo | None
    """The job erasing its write for real, when asked."""


class MemoryQueries:
    """The application's commands and queries of memories by id (workers/app/application.py
    mixes them in)."""

    clock: Callable[[], float]

    def _state(self, tenant: str) -> contextlib.AbstractContextManager[State]:
        raise NotImplementedError  # the Application's

    def write(self, principal: Principal, notes: list[Note]) -> list[Written]:
        raise NotImplementedError  # the Application's

    def update(self, principal: Principal, memory_id: str, note: Note) -> Written:
        """A new version of a memory the writer may see: `note`, written as a memory that
        supersedes it (reads then return the new one; the old one stays in the history)."""
        require(principal, WRITE)
        with self._state(principal.tenant) as state:
            memory = self._seen(principal, state, memory_id)
            if memory.superseded_by is not None:
                raise Superseded(
                    f"memory {memory_id} was superseded by {memory.superseded_by}: update the"
                    " newest version"
                )
        return self.write(principal, [dataclasses.replace(note, supersedes=[memory_id])])[0]

    @staticmethod
    def _visibility(principal: Principal) -> Visibility:
        raise NotImplementedError  # the Application's

    def _event(
        self,
        principal: Principal,
        event_type: str,
        data: dict[str, Any],
        ts: float | None,
        key: str | None,
        where: str,
    ) -> Event:
        raise NotImplementedError  # the Application's

    def _append(self, principal: Principal, events: list[Event], limited: bool = True) -> list[Any]:
        raise NotImplementedError  # the Application's

    def _erasure_id(self, principal: Principal) -> str:
        raise NotImplementedError  # the Application's

    def _erase(self, principal: Principal, subject: Subject, job_id: str) -> JobInfo:
        raise NotImplementedError  # the Application's

    def delete(self, principal: Principal, memory_id: str, erase: bool = False) -> Deleted:
        """Take a memory the writer may see out of every read, listing and link (a
        memory.deleted event); with `erase` (an admin's), also take its write out of the log
        for real, as `forget` does, in a job. Deleting a memory again changes nothing (a
        retry is safe); one deleted before can still be erased."""
        require(principal, ADMIN if erase else WRITE)
        unknown = UnknownMemory(f"id {memory_id!r} is unknown: expected the id of a written memory")
        with self._state(principal.tenant) as state:
            memory = state.memories.get(memory_id)
            if memory is None or not self._visibility(principal).sees(memory):
                raise unknown
            gone = memory.row in state.deleted
        position = None
        if not gone:
            data = MEMORY_DELETED.payload(memory_id=memory_id)
            event = self._event(principal, MEMORY_DELETED.name, data, None, None, "")
            position = self._append(principal, [event])[0].position
        job = None
        if erase:
            job = self._erase(principal, Subject(MEMORY, memory_id), self._erasure_id(principal))
        return Deleted(memory_id, position, job)

    def memory(self, principal: Principal, memory_id: str) -> Found:
        """One memory the reader may see (a memory of another scope is unknown to it)."""
        require(principal, READ)
        with self._state(principal.tenant) as state:
            return Found(state.position, self._seen(principal, state, memory_id), state.relabelled)

    def _seen(self, principal: Principal, state: State, memory_id: str) -> Memory:
        """The memory `memory_id` if the caller may see it: one of another scope is as unknown
        to it as one never written."""
        memory = state.memories.get(memory_id)
        if memory is None or not self._visibility(principal).sees(memory):
            raise UnknownMemory(f"id {memory_id!r} is unknown: expected the id of a written memory")
        if memory.row in state.deleted:
            raise UnknownMemory(f"memory {memory_id} was deleted at {state.deleted[memory.row]}")
        expires = (memory.meta or {}).get("expires_at")
        if expires is not None and expires <= self.clock():
            raise UnknownMemory(f"memory {memory_id} expired at {expires}")
        return memory

    def memories(
        self, principal: Principal, where: Filter, cursor: str | None, limit: int
    ) -> Listing:
        """The memories the reader may see that `where` matches, newest first, from the one
        before `cursor` (a memory id that a page before ended on; None: from the newest)."""
        require(principal, READ)
        if not 1 <= limit <= MAX_LISTED:
            raise InvalidRequest(f"limit {limit} is out of range: expected 1 to {MAX_LISTED}")
        with self._state(principal.tenant) as state:
            before = None
            if cursor is not None:
                memory = state.memories.get(cursor)
                if memory is None:
                    raise InvalidRequest(
                        f"cursor {cursor!r} is unknown: expected the cursor a page gave"
                    )
                before = memory.row
            where = dataclasses.replace(where, expired_before=self.clock())
            rows = listed(state, self._visibility(principal), where, before, limit + 1)
            page = [state.rows[row] for row in rows[:limit]]
            more = len(rows) > limit
            return Listing(state.position, page, state.relabelled, page[-1].id if more else None)
