"""LangChain's `BaseRetriever` on assocmem: the memories that best answer a query, as
`Document`s, with how each was found.

    from assocmem.integrations.langchain import AssocmemRetriever

    retriever = AssocmemRetriever(depth="standard", limit=5)
    docs = retriever.invoke("why did the billing job time out")

Each document's `id` is the memory's, its `page_content` the memory's text, and its
`metadata` holds `score`, `source` (direct, fuzzy, association, chain, time, context),
`via` (the links that brought an association, with their weights), `beside` (the match a
context item was written beside), `ts`, `agent` and the memory's own metadata."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from assocmem.api.client import AsyncClient, Client


class AssocmemRetriever(BaseRetriever):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client = Field(default_factory=Client)
    """The assocmem Client (default: the local `assocmem up`, or ASSOCMEM_URL and
    ASSOCMEM_API_KEY)."""
    async_client: AsyncClient | None = None
    """For `ainvoke` without a thread (default: one made from `client`'s URL and key)."""
    depth: str = "standard"
    limit: int = 10
    filters: dict[str, Any] | None = None
    """Conditions on the memories' metadata and fields (Mem0's shape)."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = self.client.read(query, depth=self.depth, limit=self.limit, filters=self.filters)
        return [document(item) for item in found["items"]]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            self.async_client = AsyncClient(self.client.url, api_key=self.client.api_key)
        found = await self.async_client.read(
            query, depth=self.depth, limit=self.limit, filters=self.filters
        )
        return [document(item) for item in found["items"]]


def document(item: dict[str, Any]) -> Document:
    metadata = {
        "score": item["score"],
        "source": item["source"],
        "via": item.get("via", []),
        "ts": item["ts"],
        "agent": item["agent"],
    }
    if item.get("beside"):
        metadata["beside"] = item["beside"]
    metadata |= item.get("metadata") or {}
    return Document(id=item["id"], page_content=item["text"], metadata=metadata)
