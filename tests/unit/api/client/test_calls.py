"""The clients share one definition of each call: the same methods, with the same
signatures, in the blocking, asyncio and typed clients."""

from __future__ import annotations

import inspect

from assocmem.api.client.async_client import AsyncClient
from assocmem.api.client.calls import Calls
from assocmem.api.client.sync import Client
from assocmem.api.client.typed import AsyncTypedClient, TypedClient


def public_calls(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and name != "close"
    }


def test_every_client_offers_the_same_calls_with_the_same_signatures() -> None:
    shared = public_calls(Calls)
    assert {"write", "read", "get_memory", "forget", "ingest"} <= set(shared)
    for client in (Client, AsyncClient, TypedClient, AsyncTypedClient):
        assert public_calls(client) == shared, client.__name__


def test_no_client_writes_a_call_of_its_own() -> None:
    for client in (Client, AsyncClient, TypedClient, AsyncTypedClient):
        own = {n for n in vars(client) if not n.startswith("_") and callable(vars(client)[n])}
        assert own <= {"close"}, f"{client.__name__} defines {own - {'close'}}"
