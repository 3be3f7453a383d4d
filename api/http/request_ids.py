"""A request id for every request: the caller's `X-Request-ID` (if it is short and plain)
or a new one, echoed in the answer and carried by every log line written while the
request is served."""

from __future__ import annotations

import re
import uuid

from assocmem.api.http.guard import App, Message, Receive, Scope, Send
from assocmem.api.logs import current_request_id

_PLAIN = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")


class RequestIds:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"")
        request_id = given.decode() if _PLAIN.match(given) else uuid.uuid4().hex
        token = current_request_id.set(request_id)

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        finally:
            current_request_id.reset(token)
