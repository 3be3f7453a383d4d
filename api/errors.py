"""Errors raised by the API layer: by the clients, for what the service answered.

ApiError              root: a request failed; carries the HTTP status and a message
 +-- BadRequest       the service refused the request (4xx); the message is its detail
 |    +-- Unauthorized  no key, or a key the service does not know (401)
 |    +-- Forbidden     the key may not do this (403)
 |    +-- NotFound      no such memory, job, key or route (404)
 |    +-- Conflict      an idempotency key used before with another body, and the like (409)
 |    +-- RateLimited   too many requests or events for the key; `retry_after` says when (429)
 +-- Unavailable      the service cannot answer now (503: Redis away, a read past its time);
 |    |               `retry_after` and `code` say more
 |    +-- ServiceDown   the service cannot be reached at its URL at all
"""

from __future__ import annotations

READ_TIMED_OUT = "read_timeout"
"""The problem code of a read past ASSOCMEM_READ_TIMEOUT whose work goes on: a client may
ask the same read again."""


class ApiError(Exception):
    def __init__(
        self,
        message: str,
        status: int = 500,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        """The problem's machine-readable code, when it has one (`read_timeout`)."""
        self.retry_after = retry_after
        """Seconds the service asked to wait before asking again (Retry-After)."""


class BadRequest(ApiError):
    def __init__(
        self,
        message: str,
        status: int = 422,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status, code, retry_after)


class Unauthorized(BadRequest):
    pass


class Forbidden(BadRequest):
    pass


class NotFound(BadRequest):
    pass


class Conflict(BadRequest):
    pass


class RateLimited(BadRequest):
    pass


class Unavailable(ApiError):
    pass


class ServiceDown(Unavailable):
    def __init__(self, message: str) -> None:
        super().__init__(message, 503)


_BY_STATUS: dict[int, type[BadRequest]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
}


def error_for(
    status: int, detail: str, code: str | None = None, retry_after: float | None = None
) -> ApiError:
    """The error a client raises for the service's answer of `status` (400 or more)."""
    if status < 500:
        return _BY_STATUS.get(status, BadRequest)(detail, status, code, retry_after)
    if status == 503:
        return Unavailable(detail, status, code, retry_after)
    return ApiError(detail, status, code, retry_after)
