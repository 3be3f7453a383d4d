"""The routes of memories by id: each route with its endpoint and the JSON it answers,
so that a new one is written here and nowhere else in the HTTP app."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from assocmem.api.http import response_schemas as out
from assocmem.api.http.principal import Caller
from assocmem.api.http.responses import memory_view
from assocmem.workers.app import results


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
    ("/v1/memories/{memory_id}", get_memory, "GET", 200, out.MemoryOut),
]
