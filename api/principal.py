"""Who is asking, as every route learns it: a FastAPI dependency the tests can override."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from assocmem.engine.principal import Principal

LOCAL_AGENT = "local"
"""The agent of every request until credentials name one (the tenants issue)."""


async def principal_of(request: Request) -> Principal:
    """Who is asking. Until credentials arrive, every request acts for the configured tenant
    as the local agent; tests override this dependency to act for others. Async: FastAPI
    runs a plain function dependency in its thread pool, a thread hop on every request."""
    return Principal(request.app.state.settings.tenant, LOCAL_AGENT)


Caller = Annotated[Principal, Depends(principal_of)]
