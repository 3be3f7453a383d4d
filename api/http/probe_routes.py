"""Probes for orchestrators, without a key: /healthz (the process answers) and /readyz (it
can serve: Redis answers and the default tenant's state is loaded)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel


class ProbeOut(BaseModel):
    status: str
    writes: str | None = None
    """On /readyz, why writes are refused while reads go on (a disk short of room)."""


def healthz() -> dict[str, Any]:
    """The API process answers (liveness)."""
    return {"status": "ok"}


def readyz(request: Request) -> Any:
    """The API can serve (readiness): Redis answers, a 503 problem otherwise, and the default
    tenant's state is loaded and folded up to the log's end, `{"status": "loading"}` with a
    503 until then (a replica that would make its first reads wait gets no traffic yet).
    Ready while a disk is short of room, since reads go on: `writes` says why they wait."""
    application = request.app.state.application
    application.runtime.log.ping()
    if not application.is_ready(request.app.state.settings.tenant):
        return JSONResponse({"status": "loading"}, 503, {"Retry-After": "1"})
    short = application.runtime.disk.shortage()
    return {"status": "ready"} if short is None else {"status": "ready", "writes": short}


ROUTES = [
    ("/healthz", healthz, "GET", 200, ProbeOut),
    ("/readyz", readyz, "GET", 200, ProbeOut),
]
