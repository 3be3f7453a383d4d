"""Probes for orchestrators, without a key: /healthz (the process answers) and /readyz (it
can serve: Redis answers)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from pydantic import BaseModel


class ProbeOut(BaseModel):
    status: str


def healthz() -> dict[str, Any]:
    """The API process answers (liveness)."""
    return {"status": "ok"}


def readyz(request: Request) -> dict[str, Any]:
    """The API can serve: Redis answers (readiness); a 503 problem otherwise."""
    request.app.state.application.runtime.log.ping()
    return {"status": "ready"}


ROUTES = [
    ("/healthz", healthz, "GET", 200, ProbeOut),
    ("/readyz", readyz, "GET", 200, ProbeOut),
]
