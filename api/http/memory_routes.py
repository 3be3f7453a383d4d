"""The routes of memories by id and by listing: each route with its endpoint and the JSON
it answers, so that a new one is written here and nowhere else in the HTTP app (its shape
is in api/http/response_schemas.py, which the clients read without the server's imports)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Query, Request
from fastapi.exceptions import RequestValidationError
from starlette.convertors import Convertor, register_url_convertor

from assocmem.api.http import query_params as q
from assocmem.api.http import response_schemas as out
from assocmem.api.http.json_body import parse_body
from assocmem.api.http.principal import Caller
from assocmem.api.http.responses import job_view, memory_view, written_view
from assocmem.api.http.schemas import NoteIn
from assocmem.engine.errors import InvalidQuery
from assocmem.engine.events.note_payload import MAX_METADATA
from assocmem.engine.recall.filters import Filters, parse_filters
from assocmem.engine.recall.listing import MAX_LISTED, Filter
from assocmem.workers.app.memory_queries import Found
from assocmem.workers.app.requests import Note

if TYPE_CHECKING:
    from assocmem.engine.state.memory import Memory


class _Position(Convertor[str]):
    """A memory's id in a path: its stream position. `GET /v1/memories/batch` is then no
    memory's address (the batch route answers POST only), as an OpenAPI client expects."""

    regex = r"[0-9]{1,20}-[0-9]{1,20}"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("position", _Position())


def _application(request: Request) -> Any:
    return request.app.state.application


def get_memory(memory_id: str, request: Request, caller: Caller) -> dict[str, Any]:
    """One memory by its id: text, concepts in its writers' words, scope, importance,
    valence, accesses and supersession. A memory of a scope the key does not see is a 404."""
    return found_view(_application(request).memory(caller, memory_id))


def found_view(found: Found) -> dict[str, Any]:
    return {"position": str(found.position)} | scoped_view(found.memory, found.labels)


def scoped_view(m: Memory, labels: Mapping[str, str]) -> dict[str, Any]:
    scope = {"user": m.user, "session": m.session, "namespace": m.namespace}
    return memory_view(m, labels) | {k: v for k, v in scope.items() if v is not None}


def update_memory(memory_id: str, body: NoteIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Write a new version of a memory: it supersedes the old one, which reads no longer
    return and its history keeps. A memory a newer version superseded already is a 409."""
    note = Note(
        body.text,
        body.concepts,
        body.importance,
        body.ts,
        None,
        body.key,
        body.metadata,
        body.expires_at,
    )
    return written_view(_application(request).update(caller, memory_id, note))


_Name = Annotated[str | None, Query(min_length=1, max_length=200)]


def _pair(item: str) -> tuple[str, str]:
    key, equals, value = item.partition("=")
    if not equals or not key:
        raise RequestValidationError(
            [
                {
                    "type": "value_error",
                    "loc": ("query", "metadata"),
                    "msg": f"{item!r} is not key=value",
                    "input": item,
                }
            ]
        )
    return key, value


MAX_FILTERS_TEXT = 2000
"""Characters of a listing's filters: an address holding more (each may take 12 once
percent-encoded) is longer than the server reads."""


def _filters(text: str | None) -> Filters | None:
    if text is None:
        return None
    try:
        spec = parse_body(text.encode())
    except json.JSONDecodeError as exc:
        raise InvalidQuery(f"filters is not JSON: {exc}") from exc
    return parse_filters(spec)


def list_memories(
    request: Request,
    caller: Caller,
    agent: _Name = None,
    kind: Annotated[str | None, Query(pattern="^(memory|activity)$")] = None,
    user: _Name = None,
    session: _Name = None,
    namespace: _Name = None,
    start: q.Start = None,
    end: q.End = None,
    superseded: Annotated[
        bool, Query(description="List memories a later version superseded too")
    ] = False,
    metadata: Annotated[
        list[str] | None,
        Query(
            max_length=MAX_METADATA,
            description="key=value, repeatable: only memories whose metadata holds each (a"
            " number or a boolean as JSON writes it: ticket=7, resolved=false)",
            json_schema_extra={"items": {"type": "string", "pattern": "^[^=]+=.*$"}},
        ),
    ] = None,
    filters: Annotated[
        str | None,
        Query(
            max_length=MAX_FILTERS_TEXT,
            description="A JSON object of conditions on metadata and fields, as reads take"
            ' them: {"team": "ops", "priority": {"gte": 2}}',
        ),
    ] = None,
    cursor: Annotated[
        str | None, Query(max_length=41, description="The cursor the page before gave")
    ] = None,
    limit: Annotated[int, Query(json_schema_extra={"minimum": 1, "maximum": MAX_LISTED})] = 100,
) -> dict[str, Any]:
    """The memories the key sees, newest first, filtered by writer, kind, scope, time (unix
    seconds, start <= ts < end) and metadata; a page at a time, the next from `cursor`."""
    pairs = tuple(_pair(item) for item in metadata or [])
    conditions = _filters(filters)
    where = Filter(agent, kind, user, session, namespace, start, end, superseded, pairs, conditions)
    page = _application(request).memories(caller, where, cursor, limit)
    return {
        "position": str(page.position),
        "memories": [scoped_view(m, page.labels) for m in page.memories],
        "cursor": page.cursor,
    }


def delete_memory(
    memory_id: str,
    request: Request,
    caller: Caller,
    erase: Annotated[
        bool,
        Query(
            description="Also take its write out of the log for real, in a job, as forget"
            " does (an admin key's)"
        ),
    ] = False,
) -> dict[str, Any]:
    """Delete a memory: a memory.deleted event takes it out of every read, listing and
    fetch, and the links it wrote off the counts. Its text stays in the log (the history
    says it was deleted) unless `erase` takes it out for real."""
    deleted = _application(request).delete(caller, memory_id, erase)
    return {
        "id": deleted.id,
        "position": None if deleted.position is None else str(deleted.position),
        "erasure": None if deleted.erasure is None else job_view(deleted.erasure),
    }


ROUTES = [
    ("/v1/memories", list_memories, "GET", 200, out.MemoriesOut),
    ("/v1/memories/{memory_id:position}", get_memory, "GET", 200, out.MemoryOut),
    ("/v1/memories/{memory_id:position}", update_memory, "PATCH", 202, out.WrittenOut),
    ("/v1/memories/{memory_id:position}", delete_memory, "DELETE", 200, out.DeletedOut),
]
