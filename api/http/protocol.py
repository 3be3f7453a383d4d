"""The HTTP protocol the API serves with: uvicorn's httptools protocol, with deadlines.

A connection must send a request's headers within `header_timeout` seconds of opening
(or of starting the request), and its body within `body_timeout` seconds of the headers;
otherwise it gets a 408 and is closed. Without them, a client sending one header line
every few seconds holds a connection forever (500 such clients hold 500 sockets).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_PROBLEM = orjson.dumps(
    {
        "type": "about:blank",
        "title": "Request timeout",
        "status": 408,
        "detail": "the request's headers or body came too slowly",
    }
)
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/problem+json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_PROBLEM), _PROBLEM)
)


def deadline_protocol(header_timeout: float, body_timeout: float) -> type[HttpToolsProtocol]:
    """A protocol class for uvicorn's `http=` with these deadlines."""

    class DeadlineProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm(header_timeout)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self.deadline is None:
                self._arm(header_timeout)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._arm(body_timeout)

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._disarm()

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if not self.transport.is_closing():
                self.transport.write(TIMED_OUT)
                self.transport.close()

    return DeadlineProtocol
