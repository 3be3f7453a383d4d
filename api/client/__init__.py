"""The Python clients of the HTTP API: `Client` (blocking) and `AsyncClient` (asyncio)."""

from __future__ import annotations

from typing import Any

from assocmem.api.client.sync import Client

__all__ = ["AsyncClient", "Client"]


def __getattr__(name: str) -> Any:
    # httpx2 is imported only by those who use the asyncio client, not by every CLI command
    if name == "AsyncClient":
        from assocmem.api.client.async_client import AsyncClient

        return AsyncClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
