"""At most so many requests in flight in one API process; more get a 503 with Retry-After.

Requests, not connections: uvicorn's own cap counted every open socket, so connections
that never sent a request (199 of them) locked every client out until the header timeout
closed them. A socket that has sent no complete request costs here nothing but its file
descriptor, and `deadline_protocol` closes it after the header timeout."""

from __future__ import annotations

from assocmem.api.http.guard import App, Receive, Scope, Send
from assocmem.api.http.problems import problem


class InFlight:
    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.running = 0
        """Requests between their headers and their answer (one event loop: no lock)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.limit:
            await self.app(scope, receive, send)
            return
        if self.running >= self.limit:
            detail = (
                f"{self.running} requests are in flight, this API process's most"
                " (ASSOCMEM_MAX_CONNECTIONS): retry in 1 s"
            )
            busy = problem(503, "Busy", detail, {"Retry-After": "1"}, "busy")
            await busy(scope, receive, send)
            return
        self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1
