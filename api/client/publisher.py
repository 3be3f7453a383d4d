"""A publisher for systems inside the cluster: events appended straight to a tenant's stream,
through the application's own rules and the same Lua script as the API (idempotency keys,
atomic batches), with no HTTP hop.

Whoever reaches Redis can append: its credentials are the publisher's, and the tenant and
agent are given here, where the API takes them from a key. Run it where the API is trusted.
"""

from __future__ import annotations

from typing import Any

from assocmem.api.client.calls import new_key
from assocmem.api.http import responses
from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import ActivityEntry, Note, Rating
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import load_settings


class Publisher:
    def __init__(self, redis_url: str, tenant: str, agent: str) -> None:
        self._runtime = Runtime.connect(load_settings({"REDIS_URL": redis_url}))
        self._application = Application(self._runtime)
        self._who = Principal(tenant, agent)

    def __enter__(self) -> Publisher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._runtime.close()

    def write_many(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append up to 1,000 memories atomically (fields as the API's; a `key` is made for
        an item without one, so sending the batch again stores it once)."""
        notes = [
            Note(
                item["text"],
                item.get("concepts"),
                item.get("importance", 3),
                item.get("ts"),
                item.get("supersedes"),
                item.get("key") or new_key(),
            )
            for item in items
        ]
        written = self._application.write(self._who, notes)
        return [responses.written_view(w) for w in written]

    def log_activity(self, text: str, **fields: Any) -> dict[str, Any]:
        entry = ActivityEntry(
            text,
            fields.get("category", "general"),
            fields.get("tags") or [],
            fields.get("source"),
            fields.get("importance", 3),
            fields.get("ts"),
            fields.get("key") or new_key(),
        )
        return responses.written_view(self._application.log_activity(self._who, entry))

    def feedback(
        self, ids: list[str], outcome: float, concepts: list[str] | None = None,
        text: str | None = None, key: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        rating = Rating(ids, outcome, concepts, text, key or new_key())
        return responses.rated_view(self._application.give_feedback(self._who, rating))
