"""Clients by scope: an adapter speaks for many users and sessions through one URL and key,
one client for each scope it has met (a client's scope is fixed when it is made)."""

from __future__ import annotations

from typing import Generic, TypeVar

from assocmem.api.client import AsyncClient, Client

C = TypeVar("C", Client, AsyncClient)


class Scoped(Generic[C]):
    def __init__(self, base: C) -> None:
        self.base = base
        """The client the adapter was given: its URL, key and timeout serve every scope."""
        self._made: dict[tuple[tuple[str, str], ...], C] = {}

    def client(self, **scope: str | None) -> C:
        """The client for `scope` (user, session, namespace; None for none): the base client
        when none is given."""
        given = tuple(sorted((k, v) for k, v in scope.items() if v))
        if not given:
            return self.base
        found = self._made.get(given)
        if found is None:
            kind = type(self.base)
            found = kind(  # type: ignore[call-arg]
                self.base.url, api_key=self.base.api_key, scope=dict(given)
            )
            self._made[given] = found
        return found

    def close(self) -> None:
        """Close the clients made here (a sync adapter's; the base client is the caller's)."""
        for client in self._made.values():
            client.close()  # type: ignore[unused-coroutine]
        self._made.clear()

    async def aclose(self) -> None:
        """Close the clients made here (an async adapter's)."""
        for client in self._made.values():
            await client.close()  # type: ignore[misc]
        self._made.clear()
