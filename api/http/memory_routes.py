"""The routes of memories by id: each route with its endpoint and the JSON it answers,
so that a new one is written here and nowhere else in the HTTP app."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.convertors import Convertor, register_url_convertor

from assocmem.api.http import response_schemas as out
from assocmem.api.http.principal import Caller
from assocmem.api.http.responses import memory_view
from assocmem.workers.app import results


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


def found_view(found: results.Found) -> dict[str, Any]:
    m = found.memory
    scope = {"user": m.user, "session": m.session, "namespace": m.namespace}
    named = {k: v for k, v in scope.items() if v is not None}
    return {"position": str(found.position)} | memory_view(m, found.labels) | named


ROUTES = [
    ("/v1/memories/{memory_id:position}", get_memory, "GET", 200, out.MemoryOut),
]
