"""Who is asking, as every route learns it: the principal of the request's API key, sent as
`Authorization: Bearer <key>` (or `X-API-Key: <key>`). Its tenant and agent come from the
key, never from a body or a query."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from assocmem.engine.principal import Principal

_bearer = HTTPBearer(auto_error=False, description="An API key: `assocmem keys create`.")
_header = APIKeyHeader(name="X-API-Key", auto_error=False)
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="assocmem"'}


async def principal_of(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header: Annotated[str | None, Security(_header)],
) -> Principal:
    """The key's principal; 401 without a key, or with one unknown or revoked. Async: FastAPI
    runs a plain function dependency in its thread pool, a thread hop on every request (the
    check is cached half a second, see workers/key_commands.py)."""
    secret = bearer.credentials if bearer is not None else header
    if not secret:
        raise HTTPException(
            401, "no API key: send `Authorization: Bearer <key>` (assocmem keys create)", CHALLENGE
        )
    application = request.app.state.application
    principal = application.keys.authenticate(secret)
    if principal is None:
        raise HTTPException(401, "the API key is unknown or revoked", CHALLENGE)
    application.limits.take_request(principal)
    return principal


Caller = Annotated[Principal, Depends(principal_of)]
