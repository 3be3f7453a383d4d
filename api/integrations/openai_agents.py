"""The OpenAI Agents SDK's `Session` on assocmem: a conversation's items kept as memories of
its session, so they are also recalled, linked and audited like any other memory.

    from assocmem.integrations.openai_agents import AssocmemSession

    session = AssocmemSession("conversation-42", user="alice")
    result = await Runner.run(agent, "What did I book?", session=session)

Each item is a memory in the session scope `session_id` (and the `user`, if given): its text
is what was said (a message's text, or the item as JSON), the item itself is kept whole so
`get_items` gives back exactly what was added, in order."""

from __future__ import annotations

import json
from typing import Any

from assocmem.api.client import AsyncClient

ITEM = "oa_item"
"""Metadata key holding the item as JSON (when it fits; else the text is the JSON)."""
WHOLE = "oa_json"
FITS = 1000
PAGE = 1000


class AssocmemSession:
    session_settings = None

    def __init__(
        self, session_id: str, *, client: AsyncClient | None = None, user: str | None = None
    ) -> None:
        """`client`: an assocmem AsyncClient whose URL and key serve the session (default:
        the local `assocmem up`, or ASSOCMEM_URL and ASSOCMEM_API_KEY)."""
        self.session_id = session_id
        base = client or AsyncClient()
        scope = {"session": session_id} | ({"user": user} if user else {})
        self._client = AsyncClient(base.url, api_key=base.api_key, scope=scope)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The latest `limit` items (all by default), oldest first."""
        found: list[dict[str, Any]] = []
        cursor = None
        while limit is None or len(found) < limit:
            size = PAGE if limit is None else min(PAGE, limit - len(found))
            page = await self._client.list_memories(
                session=self.session_id, kind="memory", cursor=cursor, limit=size
            )
            found += page["memories"]
            cursor = page["cursor"]
            if cursor is None:
                break
        return [_item(memory) for memory in reversed(found)]

    async def add_items(self, items: list[Any]) -> None:
        if items:
            await self._client.write_many([_memory(item) for item in items])

    async def pop_item(self) -> Any | None:
        page = await self._client.list_memories(session=self.session_id, kind="memory", limit=1)
        if not page["memories"]:
            return None
        newest = page["memories"][0]
        await self._client.delete_memory(newest["id"])
        return _item(newest)

    async def clear_session(self) -> None:
        while True:
            page = await self._client.list_memories(
                session=self.session_id, kind="memory", limit=PAGE
            )
            if not page["memories"]:
                return
            for memory in page["memories"]:
                await self._client.delete_memory(memory["id"])

    async def close(self) -> None:
        await self._client.close()


def _memory(item: Any) -> dict[str, Any]:
    whole = json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)
    content = item.get("content") if isinstance(item, dict) else None
    said = content if isinstance(content, str) and content.strip() else None
    if said is not None and len(whole) <= FITS:
        role = item.get("role")
        text = f"{role}: {said}" if isinstance(role, str) else said
        return {"text": text, "metadata": {ITEM: whole}}
    return {"text": whole, "metadata": {WHOLE: True}}


def _item(memory: dict[str, Any]) -> Any:
    metadata = memory.get("metadata") or {}
    return json.loads(metadata[ITEM] if ITEM in metadata else memory["text"])
