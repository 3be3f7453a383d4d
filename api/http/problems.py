"""Every failure as an RFC 9457 problem response (application/problem+json), and the
OpenAPI document saying so: the HTTP app's one place that turns errors into statuses."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import redis
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.routing import Match

from assocmem.api.errors import READ_TIMED_OUT
from assocmem.engine.errors import EngineError, quoted
from assocmem.workers.errors import (
    ApplicationError,
    DiskLow,
    KeyConflict,
    LastOperatorKey,
    NotAllowed,
    RateLimited,
    StoreError,
    StoreUnavailable,
    Superseded,
    UnknownConcept,
    UnknownJob,
    UnknownMemory,
)
from assocmem.workers.store.redis.api_keys import SCOPE_PATTERN, SCOPE_WORDS
from assocmem.workers.store.redis.errors import is_unavailable
from assocmem.workers.store.redis.keys import TENANT_PATTERN, TENANT_WORDS

log = logging.getLogger(__name__)

PROBLEM = "application/problem+json"
CUSTOM_MESSAGES = {
    "out_of_range",
    "invalid_unicode",
    "not_a_position",
    "not_a_point",
    "invalid_scope",
}
"""Validation errors whose message already reads after the value ("is out of range: ...")."""
PATTERN_WORDS = {TENANT_PATTERN: TENANT_WORDS, SCOPE_PATTERN: SCOPE_WORDS}
"""What a field's pattern asks for, in words (pydantic says the regular expression)."""
ERRORS_SAID = 10
"""Validation errors a problem's detail spells out: a batch of 500 items with two wrong
fields each gave 1,000 of them, 75 KB of detail."""


class ReadTimedOut(Exception):
    """A read ran past ASSOCMEM_READ_TIMEOUT. The work goes on: a rebuilt state (`as_of`,
    `without_feedback`) is kept, so the same read asked again is answered from it."""


class Problem(BaseModel):
    """RFC 9457: what went wrong, for people (`detail` names the field and the value)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str | None = None
    """Machine-readable, where a client acts on it: `rate_limited`, `read_timeout`."""


def problem(
    status: int,
    title: str,
    detail: str,
    headers: dict[str, str] | None = None,
    code: str | None = None,
) -> Response:
    body: dict[str, object] = {"type": "about:blank", "title": title, "status": status}
    body["detail"] = detail
    if code is not None:
        body["code"] = code
    return Response(orjson.dumps(body), status, headers=headers, media_type=PROBLEM)


def install(app: FastAPI) -> None:
    """Register the handlers, and make the OpenAPI document declare problem bodies."""
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(KeyConflict, _conflict)
    app.add_exception_handler(Superseded, _conflict)
    app.add_exception_handler(LastOperatorKey, _conflict)
    app.add_exception_handler(NotAllowed, _not_allowed)
    app.add_exception_handler(RateLimited, _rate_limited)
    app.add_exception_handler(ReadTimedOut, _read_timed_out)
    app.add_exception_handler(ApplicationError, _application_error)
    app.add_exception_handler(EngineError, _application_error)
    app.add_exception_handler(DiskLow, _disk_low)
    app.add_exception_handler(StoreUnavailable, _store_unavailable)
    app.add_exception_handler(StoreError, _store_error)
    app.add_exception_handler(redis.RedisError, _redis_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    said = [_said(e) for e in errors[:ERRORS_SAID]]
    if len(errors) > ERRORS_SAID:
        said.append(f"and {len(errors) - ERRORS_SAID} more errors ({len(errors)} in all)")
    return problem(422, "Invalid request", "; ".join(said))


def _field(location: tuple[Any, ...]) -> str:
    """("body", "items", 1, "text") -> "items[1].text"."""
    field = ""
    for part in location:
        if part in ("body", "query", "path", "header"):
            continue
        field += f"[{part}]" if isinstance(part, int) else f".{part}" if field else str(part)
    return field or "body"


def _said(error: Any) -> str:
    """One validation error in the API's words: the field, (the start of) the value, and what
    was expected."""
    field = _field(error["loc"])
    value, kind, context = error.get("input"), error["type"], error.get("ctx") or {}
    if kind in CUSTOM_MESSAGES:
        return f"{field} {quoted(value)} {error['msg']}"
    if kind == "json_invalid":
        return f"body is not valid JSON: {context.get('error', error['msg'])}"
    if kind == "string_pattern_mismatch" and context.get("pattern") in PATTERN_WORDS:
        return f"{field} {quoted(value)} is invalid: expected {PATTERN_WORDS[context['pattern']]}"
    if kind.endswith(("too_short", "too_long")) and isinstance(value, str | list | dict):
        short = kind.endswith("too_short")
        bound = f"at least {context['min_length']}" if short else f"at most {context['max_length']}"
        unit = "characters" if isinstance(value, str) else "items"
        return f"{field} has {len(value)} {unit}: expected {bound}"
    return f"{field} {quoted(value)} is invalid: {error['msg']}"


async def _conflict(request: Request, exc: Exception) -> Response:
    return problem(409, "Conflict", str(exc))


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return problem(403, "Forbidden", str(exc))


async def _rate_limited(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RateLimited)
    headers = {"Retry-After": str(exc.retry_after)}
    return problem(429, "Too many requests", str(exc), headers, code="rate_limited")


async def _read_timed_out(request: Request, exc: Exception) -> Response:
    headers = {"Retry-After": "1"}
    return problem(503, "Read timed out", str(exc), headers, code=READ_TIMED_OUT)


async def _application_error(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, UnknownMemory | UnknownConcept | UnknownJob) else 422
    return problem(status, "Invalid request" if status == 422 else "Not found", str(exc))


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    return problem(503, "Store unavailable", str(exc), {"Retry-After": "1"})


async def _disk_low(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DiskLow)
    headers = {"Retry-After": str(exc.retry_after)}
    return problem(507, "Insufficient storage", str(exc), headers, code="disk_low")


async def _store_error(request: Request, exc: Exception) -> Response:
    return problem(500, "Store error", str(exc))


async def _redis_error(request: Request, exc: Exception) -> Response:
    """What RQ (queueing a job, listing them) raises as Redis raised it, as the stores' own."""
    if is_unavailable(exc):
        return await _store_unavailable(request, StoreUnavailable(f"Redis: {exc}"))
    return await _store_error(request, StoreError(f"Redis: {exc}"))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    titles = {
        400: "Bad request",
        401: "Unauthorized",
        404: "Not found",
        405: "Method not allowed",
        413: "Request too large",
    }
    detail = exc.detail if isinstance(exc.detail, str) else "request refused"
    title = titles.get(exc.status_code, "Request refused")
    headers = dict(exc.headers or {})
    if exc.status_code == 405:  # every route of the path, not only the first one tried
        headers["Allow"] = ", ".join(_methods(request))
    return problem(exc.status_code, title, detail, headers)


def _methods(request: Request) -> list[str]:
    found: set[str] = set()
    for route in request.app.routes:
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match is not Match.NONE:
            found |= set(getattr(route, "methods", None) or ())
    return sorted(found)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(500, "Server error", f"unexpected {type(exc).__name__}: see the API's log")


ERRORS = {
    400: "The body cannot be read (not UTF-8 JSON), or the Host is not this service",
    401: "No API key, or one that is unknown or revoked",
    403: "The API key lacks the permission the operation needs",
    404: "Unknown memory, concept, route or resource",
    409: "Idempotency key used with another body",
    413: "Request body over the size limit",
    422: "Invalid request: the detail names the field and the value",
    429: "The API key is over its request or event rate: retry after Retry-After seconds",
    503: "Redis (the store) cannot be reached or refuses writes: retry after Retry-After seconds",
    507: "A disk the pipeline writes to is short of room: writes wait (retry after"
    " Retry-After seconds), reads go on",
}


def documented(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with problem+json for every error of every operation, in place
    of FastAPI's own validation-error shape."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = Problem.model_json_schema()
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    reference = {"$ref": "#/components/schemas/Problem"}
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERRORS.items():
                responses[str(status)] = {
                    "description": description,
                    "content": {PROBLEM: {"schema": reference}},
                }
            responses["500"] = {
                "description": "Server error",
                "content": {PROBLEM: {"schema": reference}},
            }
    return schema
