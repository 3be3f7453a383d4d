"""Counts every refused request (a 4xx or 5xx answer, the guard's included) by reason, for
the metrics: the outermost layer, so it sees what the guard refuses too."""

from __future__ import annotations

from assocmem.api.http.guard import App, Message, Receive, Scope, Send

REASONS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "too_slow",
    409: "conflict",
    413: "too_large",
    422: "invalid",
    429: "rate_limited",
    500: "server_error",
    503: "unavailable",
    507: "disk_low",
}


class CountRefusals:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                metrics = getattr(scope["app"].state, "metrics", None)
                if metrics is not None:
                    status = message["status"]
                    metrics.refused.labels(REASONS.get(status, str(status))).inc()
            await send(message)

        await self.app(scope, receive, counted)
