"""AutoGen's `Memory` on assocmem: what an agent remembers, added to its model context
before each reply within a token budget.

    from assocmem.integrations.autogen import AssocmemMemory

    memory = AssocmemMemory(budget=400)
    agent = AssistantAgent("assistant", model_client=..., memory=[memory])

`update_context` reads with the last message's text and adds the prompt text assocmem
makes (the memories that best answer it, associations with the links that brought them,
at most `budget` tokens) as a system message. `add` stores a content's text (a dict as
JSON) with its metadata; `query` returns the memories with their score and source in the
metadata; `clear` deletes the memories this memory's scope holds."""

from __future__ import annotations

import json
from typing import Any

from autogen_core import CancellationToken
from autogen_core.memory import (
    Memory,
    MemoryContent,
    MemoryMimeType,
    MemoryQueryResult,
    UpdateContextResult,
)
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage

from assocmem.api.client import AsyncClient
from assocmem.api.errors import BadRequest

PAGE = 1000


class AssocmemMemory(Memory):
    def __init__(
        self,
        client: AsyncClient | None = None,
        *,
        budget: int = 500,
        limit: int = 10,
        depth: str = "standard",
    ) -> None:
        """`client`: an assocmem AsyncClient (default: the local `assocmem up`, or
        ASSOCMEM_URL and ASSOCMEM_API_KEY), scoped as the memories are about (its `scope`);
        `budget`: tokens of memory added to the context."""
        self.client = client or AsyncClient()
        self.budget, self.limit, self.depth = budget, limit, depth

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        messages = await model_context.get_messages()
        last = next((m for m in reversed(messages) if isinstance(m.content, str)), None)
        if last is None or not str(last.content).strip():
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        try:
            found = await self.client.read(
                str(last.content), limit=self.limit, depth=self.depth, token_budget=self.budget
            )
        except BadRequest as exc:  # a message with no content words recalls nothing
            if "content words" not in str(exc):
                raise
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        results = [_content(item) for item in found["items"]]
        if found.get("prompt"):
            text = found["prompt"]["text"]
            await model_context.add_message(SystemMessage(content=f"Relevant memory:\n{text}"))
        return UpdateContextResult(memories=MemoryQueryResult(results=results))

    async def query(
        self,
        query: str | MemoryContent,
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """The memories that best answer `query`; `kwargs`: read options (limit, depth,
        filters, time)."""
        text = query if isinstance(query, str) else _text(query)
        options = {"limit": self.limit, "depth": self.depth} | kwargs
        found = await self.client.read(text, **options)
        return MemoryQueryResult(results=[_content(item) for item in found["items"]])

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        metadata = {
            k: v
            for k, v in (content.metadata or {}).items()
            if isinstance(v, str | int | float | bool)
        }
        await self.client.write(_text(content), metadata=metadata or None)

    async def clear(self) -> None:
        """Delete every memory this memory's client sees in its scope."""
        cursor = None
        while True:
            page = await self.client.list_memories(kind="memory", cursor=cursor, limit=PAGE)
            for memory in page["memories"]:
                await self.client.delete_memory(memory["id"])
            cursor = page["cursor"]
            if cursor is None:
                return

    async def close(self) -> None:
        await self.client.close()


def _text(content: MemoryContent) -> str:
    if isinstance(content.content, str):
        return content.content
    if isinstance(content.content, dict):
        return json.dumps(content.content, ensure_ascii=False)
    raise ValueError(
        f"content of type {content.mime_type}: assocmem keeps text (str) and JSON (dict)"
    )


def _content(item: dict[str, Any]) -> MemoryContent:
    metadata = dict(item.get("metadata") or {})
    metadata |= {"id": item["id"], "score": item["score"], "source": item["source"]}
    return MemoryContent(content=item["text"], mime_type=MemoryMimeType.TEXT, metadata=metadata)
