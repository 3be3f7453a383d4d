"""Who is asking, as every route learns it: the principal of the request's API key, sent as
`Authorization: Bearer <key>` (or `X-API-Key: <key>`). Its tenant and agent come from the
key, never from a body or a query; whom it is about (user, session, namespace) from the
X-Assocmem-* headers, recorded on every event it appends."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from assocmem.engine.principal import Principal
from assocmem.workers.store.redis.api_keys import SCOPE, SCOPE_WORDS

_bearer = HTTPBearer(auto_error=False, description="An API key: `assocmem keys create`.")
_header = APIKeyHeader(name="X-API-Key", auto_error=False)
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="assocmem"'}
SCOPES = ("X-Assocmem-User", "X-Assocmem-Session", "X-Assocmem-Namespace")
"""Whom a request is about, out of the OpenAPI document (the app's description lists them):
declared header parameters make fuzzers send "unexpected" extra headers as invalid
requests, and an HTTP API rightly ignores headers it does not know."""


def _scopes(request: Request) -> tuple[str | None, ...]:
    """The scope headers' values, each checked (a 422 names the malformed ones). Read here
    rather than declared on `principal_of`: every route declared them again, which was
    0.07 s of the API's start (in which it builds every route's parameters)."""
    values = tuple(request.headers.get(name) for name in SCOPES)
    errors = [
        {
            "type": "invalid_scope",
            "loc": ("header", name),
            "msg": f"is invalid: expected {SCOPE_WORDS}",
            "input": value,
        }
        for name, value in zip(SCOPES, values, strict=True)
        if value is not None and not SCOPE.fullmatch(value)
    ]
    if errors:
        raise RequestValidationError(errors)
    return values


async def principal_of(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header: Annotated[str | None, Security(_header)],
) -> Principal:
    """The key's principal; 401 without a key, or with one unknown or revoked. Async: FastAPI
    runs a plain function dependency in its thread pool, a thread hop on every request (the
    check is cached half a second, see workers/app/key_commands.py)."""
    user, session, namespace = _scopes(request)
    secret = bearer.credentials if bearer is not None else header
    if not secret:
        raise HTTPException(
            401, "no API key: send `Authorization: Bearer <key>` (assocmem keys create)", CHALLENGE
        )
    application = request.app.state.application
    peer = request.client.host if request.client is not None else "unknown"
    application.limits.refuse_failing_peer(peer)
    principal = application.keys.authenticate(secret)
    if principal is None:
        application.limits.count_failed_key(peer)
        raise HTTPException(401, "the API key is unknown or revoked", CHALLENGE)
    application.limits.take_request(principal)
    if user or session or namespace:  # scopes come with the request; tenant and agent never do
        principal = _narrowed(principal, (user, session, namespace))
    return principal


def _narrowed(principal: Principal, asked: tuple[str | None, ...]) -> Principal:
    """The principal as the request's headers name its scope, where its key is not pinned:
    a pinned part stays the key's, and a header naming another is a 403."""
    pinned = (principal.user, principal.session, principal.namespace)
    names = ("user", "session", "namespace")
    for name, pin, wanted in zip(names, pinned, asked, strict=True):
        if pin is not None and wanted is not None and wanted != pin:
            raise HTTPException(
                403,
                f"the API key is pinned to {name} {pin!r}: it cannot act as {name} {wanted!r}",
            )
    user, session, namespace = (
        pin if pin is not None else wanted for pin, wanted in zip(pinned, asked, strict=True)
    )
    return dataclasses.replace(principal, user=user, session=session, namespace=namespace)


Caller = Annotated[Principal, Depends(principal_of)]
