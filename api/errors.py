"""Errors raised by the API layer.

ApiError              root: a request failed; carries the HTTP status and a message
 +-- BadRequest       the request is invalid (4xx); the message names the field and value
 +-- ServiceDown      the service cannot be reached at its URL
"""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, message: str, status: int = 500) -> None:
        super().__init__(message)
        self.status = status


class BadRequest(ApiError):
    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message, status)


class ServiceDown(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(message, 503)
