"""Typed results for Python agents: the clients' answers as pydantic models (the shapes of
the OpenAPI document, response_schemas.py), so `found.items[0].via[0].weight` is checked
when the answer arrives and completed by an editor.

`TypedClient` and `AsyncTypedClient` wrap `Client` and `AsyncClient` (key, scope, timeouts,
retries that reuse idempotency keys, reads waiting for the client's own writes, degraded
mode) and validate each answer against the shape its call declares (`Call.answer`, in
calls.py). A field the service adds later is ignored, not refused, so an older SDK keeps
working against a newer service. A call with no shape declared (keys, `jobs`'s rows)
answers its dict; `.raw` is the dict client underneath."""

from __future__ import annotations

from typing import Any

from assocmem.api.client.answers import Chains, Published, Recall
from assocmem.api.client.async_client import AsyncClient
from assocmem.api.client.calls import Call, Calls
from assocmem.api.client.sync import DEFAULT_TIMEOUT, Client

__all__ = ["AsyncTypedClient", "Chains", "Published", "Recall", "TypedClient"]


def typed(call: Call, answer: Any) -> Any:
    """`answer` validated against the shape `call` declares (each item of a picked list)."""
    if call.answer is None:
        return answer
    if call.pick is not None:
        return [call.answer.model_validate(item) for item in answer]
    return call.answer.model_validate(answer)


class TypedClient(Calls[Any]):
    def __init__(
        self,
        url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """The arguments of `Client`."""
        self.raw = Client(url, timeout, api_key, degrade_after, scope)

    def __enter__(self) -> TypedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.raw.close()

    @property  # type: ignore[override]
    def position(self) -> str | None:
        """The latest position this client's writes returned; its reads wait for it."""
        return self.raw.position

    def _send(self, call: Call) -> Any:
        return typed(call, self.raw._send(call))


class AsyncTypedClient(Calls[Any]):
    def __init__(
        self,
        url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """The arguments of `AsyncClient`."""
        self.raw = AsyncClient(url, timeout, api_key, degrade_after, scope)

    async def __aenter__(self) -> AsyncTypedClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.raw.close()

    @property  # type: ignore[override]
    def position(self) -> str | None:
        return self.raw.position

    async def _send(self, call: Call) -> Any:
        return typed(call, await self.raw._send(call))
