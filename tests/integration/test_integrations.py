"""The framework adapters (assocmem.integrations) against the real frameworks' packages and the
real API over real Redis."""

from __future__ import annotations

import asyncio
import inspect
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assocmem.api.client import AsyncClient, Client
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import operator_key
from tests.live_api import serving


@pytest.fixture
def api(settings: Settings) -> Iterator[tuple[str, str]]:
    with serving(settings) as url:
        yield url, operator_key(settings)


def test_the_mem0_adapter_takes_mem0s_arguments_and_keeps_users_apart(api) -> None:
    import mem0

    from assocmem.integrations.mem0 import Memory

    for name in ("add", "search", "get", "get_all", "update", "delete", "delete_all", "history"):
        theirs = inspect.signature(getattr(mem0.Memory, name)).parameters
        ours = inspect.signature(getattr(Memory, name)).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in ours.values())
        missing = [p for p in theirs if p not in ours and p not in ("kwargs",)]
        assert not missing or takes_any, f"{name} lacks Mem0's {missing}"
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        in_order = [p for p in theirs if theirs[p].kind is positional]
        assert [p for p in ours if ours[p].kind is positional][: len(in_order)] == in_order, name

    url, key = api
    with Client(url, api_key=key) as client:
        m = Memory(client)
        added = m.add(
            [
                {"role": "user", "content": "I moved to Lisbon in May"},
                {"role": "assistant", "content": "Noted: Lisbon since May"},
            ],
            user_id="alice",
            agent_id="planner",
            metadata={"topic": "home"},
        )
        assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]
        m.add("Bob moved to Porto", user_id="bob")
        found = m.search("where did they move", filters={"user_id": "alice"}, top_k=5)
        texts = [r["memory"] for r in found["results"]]
        assert "I moved to Lisbon in May" in texts and "Bob moved to Porto" not in texts
        first = found["results"][0]
        assert first["metadata"]["agent_id"] == "planner" and first["score"] > 0
        assert (
            m.search("moved", filters={"user_id": "alice", "agent_id": "nobody"})["results"] == []
        )
        every = m.get_all(filters={"user_id": "alice"})["results"]
        assert {r["memory"] for r in every} == {
            "I moved to Lisbon in May",
            "Noted: Lisbon since May",
        }
        one = every[-1]["id"]
        assert m.get(one)["memory"] == "I moved to Lisbon in May"
        newer = m.update(one, "I moved to Lisbon in June")["id"]
        assert m.get(newer)["metadata"]["topic"] == "home"  # kept from the old version
        written, superseded = m.history(one)
        assert written["event"] == "memory.written" and superseded["detail"] == {
            "superseded_by": newer
        }
        m.delete(newer)
        assert m.get(newer) is None
        m.delete_all(user_id="alice")
        assert m.get_all(filters={"user_id": "alice"})["results"] == []
        assert [r["memory"] for r in m.get_all(filters={"user_id": "bob"})["results"]] == [
            "Bob moved to Porto"
        ]
        with pytest.raises(ValueError, match="user_id, agent_id or run_id"):
            m.delete_all()
        m.close()


def test_the_langgraph_store_puts_gets_searches_and_maps_users_to_scopes(api) -> None:
    from langgraph.store.base import BaseStore

    from assocmem.integrations.langgraph import AssocmemStore

    url, key = api
    with Client(url, api_key=key) as client:
        store = AssocmemStore(client, user_at=1)
        assert isinstance(store, BaseStore)
        store.put(("memories", "alice"), "home", {"text": "lives in Lisbon", "since": 2024})
        store.put(("memories", "alice"), "food", {"text": "likes grilled sardines", "since": 2019})
        store.put(("memories", "bob"), "home", {"text": "lives in Porto", "since": 2020})
        item = store.get(("memories", "alice"), "home")
        assert item.value == {"text": "lives in Lisbon", "since": 2024}
        assert item.namespace == ("memories", "alice") and item.key == "home"
        store.put(("memories", "alice"), "home", {"text": "lives in Sintra", "since": 2025})
        again = store.get(("memories", "alice"), "home")
        assert again.value["text"] == "lives in Sintra" and again.created_at == item.created_at
        found = store.search(("memories", "alice"), query="where does she live")
        assert [(i.key, i.value["text"]) for i in found][:1] == [("home", "lives in Sintra")]
        assert all(i.namespace == ("memories", "alice") for i in found) and found[0].score
        old = store.search(("memories",), filter={"since": {"$lt": 2021}})
        assert {(i.namespace[1], i.key) for i in old} == {("alice", "food"), ("bob", "home")}
        assert store.list_namespaces(prefix=("memories",)) == [
            ("memories", "alice"),
            ("memories", "bob"),
        ]
        store.delete(("memories", "alice"), "food")
        assert store.get(("memories", "alice"), "food") is None

        async def asynchronously() -> None:
            await store.aput(("notes", "carol"), "todo", {"text": "renew the passport"})
            assert (await store.aget(("notes", "carol"), "todo")).value[
                "text"
            ] == "renew the passport"
            assert [i.key for i in await store.asearch(("notes", "carol"), query="passport")] == [
                "todo"
            ]

        asyncio.run(asynchronously())
        listed = client.list_memories(user="bob")["memories"]  # bob's items are in his scope
        assert [m["metadata"]["lg_key"] for m in listed] == ["home"]
        store.close()


def test_the_langchain_retriever_gives_documents_with_how_each_was_found(api) -> None:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from assocmem.integrations.langchain import AssocmemRetriever

    url, key = api
    with Client(url, api_key=key) as client:
        client.write("The billing job timed out twice", metadata={"ticket": 7})
        client.write("Timeouts on the billing job come from the slow invoice query")
        retriever = AssocmemRetriever(client=client, limit=5)
        assert isinstance(retriever, BaseRetriever)
        docs = retriever.invoke("billing timeout")
        assert docs and all(isinstance(d, Document) for d in docs)
        first = docs[0]
        assert first.id and first.metadata["source"] == "direct" and first.metadata["score"] > 0
        assert any(d.metadata.get("ticket") == 7 for d in docs)
        again = asyncio.run(retriever.ainvoke("billing timeout"))
        assert [d.id for d in again] == [d.id for d in docs]


def test_the_autogen_memory_adds_what_it_recalls_to_the_model_context(api) -> None:
    from autogen_core.memory import Memory, MemoryContent, MemoryMimeType
    from autogen_core.model_context import BufferedChatCompletionContext
    from autogen_core.models import SystemMessage, UserMessage

    from assocmem.integrations.autogen import AssocmemMemory

    url, key = api

    async def run() -> None:
        async with AsyncClient(url, api_key=key, scope={"user": "dana"}) as client:
            memory = AssocmemMemory(client, budget=200)
            assert isinstance(memory, Memory)
            await memory.add(
                MemoryContent(
                    content="Dana prefers window seats on long flights",
                    mime_type=MemoryMimeType.TEXT,
                    metadata={"kind": "preference"},
                )
            )
            found = await memory.query("window seat")
            assert found.results[0].content == "Dana prefers window seats on long flights"
            assert found.results[0].metadata["source"] == "direct"
            context = BufferedChatCompletionContext(buffer_size=10)
            await context.add_message(
                UserMessage(content="Book a seat on my flight", source="user")
            )
            updated = await memory.update_context(context)
            assert updated.memories.results
            messages = await context.get_messages()
            assert (
                isinstance(messages[-1], SystemMessage) and "window seats" in messages[-1].content
            )
            await memory.clear()
            assert (await memory.query("window seat")).results == []

    asyncio.run(run())


def test_the_openai_agents_session_gives_back_its_items_in_order(api) -> None:
    from agents.memory import Session

    from assocmem.integrations.openai_agents import AssocmemSession

    url, key = api

    async def run() -> None:
        async with AsyncClient(url, api_key=key) as base:
            session = AssocmemSession("conversation-42", client=base, user="erin")
            assert isinstance(session, Session)
            items = [
                {"role": "user", "content": "What did I book?"},
                {"role": "assistant", "content": "A flight to Lisbon on May 3"},
                {"type": "function_call", "name": "lookup", "arguments": "{}", "call_id": "c1"},
            ]
            await session.add_items(items)
            assert await session.get_items() == items
            assert await session.get_items(limit=2) == items[1:]
            assert await session.pop_item() == items[2]
            assert await session.get_items() == items[:2]
            other = AssocmemSession("conversation-43", client=base, user="erin")
            assert await other.get_items() == []
            await session.clear_session()
            assert await session.get_items() == []
            await session.close()
            await other.close()

    asyncio.run(run())


EXAMPLES = {
    "mem0_switch.py": ["vegetarian", "left: []"],
    "langgraph_store.py": ["Lisbon on May 3"],
    "langchain_retriever.py": ["direct", "timed out"],
    "autogen_memory.py": ["SystemMessage", "window seats"],
    "openai_agents_session.py": ["assistant -> Booked: TP 1351"],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_adapters_example_in_docs_runs_against_its_framework(api, name: str) -> None:
    url, key = api
    script = Path(__file__).parents[2] / "docs" / "examples" / name
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "ASSOCMEM_URL": url, "ASSOCMEM_API_KEY": key},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for said in EXAMPLES[name]:
        assert said in done.stdout, done.stdout
