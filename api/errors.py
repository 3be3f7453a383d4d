"""Errors raised by the API layer.

ApiError              root: a request failed; carries the HTTP status and a message
 +-- BadRequest       the request is invalid (4xx); the message names the field and value
 +-- ServiceDown      the service cannot be reached at its URL
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
    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message, status)


class ServiceDown(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(message, 503)
