"""The first thing every request meets: its Host must name this service (no DNS rebinding
from a browser page), and its body must fit the size limit, refused (413) before it is
read whole."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from assocmem.api.http.problems import problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    def __init__(self, app: App, allowed_hosts: tuple[str, ...], max_body: int) -> None:
        self.app = app
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        host = _host_name(headers.get(b"host", b"").decode("latin-1"))
        if "*" not in self.allowed_hosts and host not in self.allowed_hosts:
            detail = (
                f"Host {host!r} is not this service: expected one of {sorted(self.allowed_hosts)}"
            )
            await problem(400, "Invalid host", detail)(scope, receive, send)
            return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await problem(413, "Request too large", self._too_large(int(length)))(
                scope, receive, send
            )
            return
        await self.app(scope, self._limited(receive), send)

    def _limited(self, receive: Receive) -> Receive:
        """`receive`, refusing a body (sent without a length, or chunked) once it grows past the limit."""
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise HTTPException(413, self._too_large(received))
            return message

        return limited

    def _too_large(self, size: int) -> str:
        return (
            f"body has {size} bytes or more: expected at most {self.max_body}"
            " (ASSOCMEM_MAX_BODY_BYTES; split a large batch)"
        )


def _host_name(host: str) -> str:
    """The host of a Host header, without its port ("[::1]:8765" -> "::1")."""
    if host.startswith("["):
        return host[1 : host.find("]")].lower()
    return host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()
