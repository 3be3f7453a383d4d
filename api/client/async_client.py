"""The Python client for asyncio agents: every call the blocking client has (`Calls`), with
its behaviour: the key, timeouts, idempotency keys made for appends and reused by their
retries, reads waiting for this client's own writes, and the degraded mode
(`degrade_after`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import orjson

from assocmem.api.client.calls import WRITES, Call, Calls
from assocmem.api.client.local import where
from assocmem.api.client.sync import (
    DEFAULT_TIMEOUT,
    REBUILD_WAIT,
    answer_of,
    degraded,
    latest_written,
    problem_code,
    problem_detail,
    rebuild_pause,
    retry_after_seconds,
    scope_headers,
)
from assocmem.api.errors import ApiError, ServiceDown, error_for

SEND_ATTEMPTS = 4
"""Sends of an append whose events carry idempotency keys (or of a read), when the service
is unreachable or briefly away (502-504)."""
RETRY_AFTER = (0.2, 0.4, 0.8)
AWAY = (502, 503, 504)


class AsyncClient(Calls[Awaitable[dict[str, Any]]]):
    """The asyncio client: every call of `Calls`, each awaited for a dict."""

    def __init__(
        self,
        url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """As `Client`: `url` and `api_key` found as it finds them; `scope` (user, session,
        namespace) recorded on every event appended and filtering reads; `degrade_after` makes
        reads and chains answer empty, flagged `degraded`, within that many seconds of an
        outage."""
        url, api_key = where(url, api_key)
        if not url.startswith(("http://", "https://")):
            raise ValueError(
                f"{url!r} is not an http(s) URL such as http://127.0.0.1:8765 (the default of assocmem up)"
            )
        self.url = url.rstrip("/")
        self.api_key = api_key
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        headers |= scope_headers(scope or {})
        self._timeout = timeout
        self._degrade_after = degrade_after
        self._http = httpx2.AsyncClient(
            base_url=self.url, headers=headers, timeout=httpx2.Timeout(timeout)
        )
        self.position: str | None = None
        """The latest position this client's writes returned; its reads wait for it."""
        self.on_wait: Callable[[ApiError], None] | None = None
        """As `Client.on_wait`: told how far a rebuild has come each time a read waits."""

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call) -> dict[str, Any]:  # type: ignore[override]
        if call.empty is not None and self._degrade_after is not None:
            answer = await self._degradable(call, call.empty)
        elif call.rebuilt:
            answer = await self._rebuilt(call)
        else:
            answer = await self._request(call)
        if call.method in WRITES and not call.changes_nothing:
            self.position = latest_written(self.position, answer)
        return answer[call.pick] if call.pick else answer  # type: ignore[no-any-return]

    async def _degradable(self, call: Call, empty: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = await asyncio.wait_for(self._request(call, once=True), self._degrade_after)
        except TimeoutError:
            reason = f"assocmem at {self.url} did not answer within {self._degrade_after:g} s"
            return {**empty, "degraded": True, "reason": reason}
        except ApiError as exc:
            return degraded(empty, exc)
        return {**answer, "degraded": False}

    async def _rebuilt(self, call: Call) -> dict[str, Any]:
        """As `Client._rebuilt`: asked again while the service rebuilds the state."""
        deadline = time.monotonic() + REBUILD_WAIT
        while True:
            try:
                return await self._request(call)
            except ApiError as exc:
                pause = rebuild_pause(exc, deadline)
                if self.on_wait is not None:
                    self.on_wait(exc)
                await asyncio.sleep(pause)

    async def _request(self, call: Call, once: bool = False) -> dict[str, Any]:
        """Sent again on a lost connection or a 502-504 when that is safe (a read, or an
        append whose events carry keys), unless `once`."""
        again = call.keyed or call.changes_nothing or call.method == "GET"
        content = orjson.dumps(call.body) if call.body is not None else None
        headers = {"content-type": "application/json"} if content is not None else None
        params = call.params or None
        attempts = SEND_ATTEMPTS if again and not once else 1
        for attempt in range(attempts):
            try:
                response = await self._http.request(
                    call.method, call.path, content=content, params=params, headers=headers
                )
            except httpx2.TimeoutException as exc:
                if attempt + 1 == attempts:
                    raise ServiceDown(
                        f"assocmem at {self.url} did not answer within {self._timeout:g} s"
                    ) from exc
            except httpx2.TransportError as exc:
                if attempt + 1 == attempts:
                    raise ServiceDown(f"assocmem is not reachable at {self.url}: {exc}") from exc
            else:
                if response.status_code not in AWAY or attempt + 1 == attempts:
                    return _answer(response)
            await asyncio.sleep(RETRY_AFTER[min(attempt, len(RETRY_AFTER) - 1)])
        raise AssertionError("unreachable")  # the last attempt returns or raises


def _answer(response: httpx2.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        raise error_for(
            response.status_code,
            problem_detail(response.content, response.status_code),
            problem_code(response.content),
            retry_after_seconds(response.headers.get("retry-after")),
        )
    return answer_of(response.content, response.headers.get("content-type", ""))  # type: ignore[no-any-return]
