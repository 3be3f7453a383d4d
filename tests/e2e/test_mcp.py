"""The MCP tools from the MCP SDK's own client, over stdio and streamable HTTP, against a
real pipeline: what an agent remembers it recalls with the links that brought it; the key of
the server's configuration, never a tool argument, decides whose memory it is; and with the
service gone, recall answers degraded within its bound."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from assocmem.workers.runtime.redis_server import free_port
from tests.e2e.pipeline import Pipeline, cli, cli_json

TOOLS = {
    "remember",
    "recall",
    "feedback",
    "find_chain",
    "log_activity",
    "graph",
    "get",
    "list",
    "update",
    "delete",
}


def server_env(url: str, key: str) -> dict[str, str]:
    return {**os.environ, "ASSOCMEM_URL": url, "ASSOCMEM_API_KEY": key}


def over_stdio(env: dict[str, str], *options: str) -> AbstractAsyncContextManager[Any]:
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "assocmem.api.cli", "mcp", *options], env=env
    )
    return stdio_client(command)


async def with_session(
    transport: AbstractAsyncContextManager[Any], work: Callable[[Any], Awaitable[Any]]
) -> Any:
    async with transport as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        return await work(session)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def remember_and_recall(session: ClientSession) -> dict[str, Any]:
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:  # whose memory it is comes from the key only
        assert not {"tenant", "agent", "user"} & set(tool.input_schema.get("properties", {}))
    notes = [  # the README's walk-through shape: deploy and billing meet twice
        ("the deploy failed on a billing timeout", ["deploy", "billing"]),
        ("the deploy broke billing again", ["deploy", "billing"]),
        ("billing retries use jitter", ["billing", "jitter"]),
        ("jitter needs backoff", ["jitter", "backoff"]),
        ("the deploy was rolled back", ["deploy", "rollback"]),
    ]
    ids = [
        (await call(session, "remember", {"text": text, "concepts": concepts}))["id"]
        for text, concepts in notes
    ]
    first = {"id": ids[0]}
    found = await call(session, "recall", {"query": "deploy", "depth": "deep"})
    rated = await call(
        session,
        "feedback",
        {"ids": [first["id"]], "outcome": 1.0, "query": "why did the deploy fail"},
    )
    logged = await call(session, "log_activity", {"text": "rolled back the billing deploy"})
    around = await call(session, "graph", {"concepts": ["billing"]})
    chains = await call(session, "find_chain", {"concepts": ["deploy", "jitter"]})
    got = await call(session, "get", {"memory_id": first["id"]})
    assert got["id"] == first["id"] and got["text"] == notes[0][0]
    listed = await call(session, "list", {"kind": "memory", "limit": 2})
    assert [m["text"] for m in listed["memories"]] == [notes[-1][0], notes[-2][0]]
    assert listed["cursor"]
    newer = await call(session, "update", {"memory_id": first["id"], "text": "the deploy failed"})
    assert (await call(session, "get", {"memory_id": first["id"]}))["superseded_by"] == newer["id"]
    removed = await call(session, "delete", {"memory_id": newer["id"]})
    assert removed["id"] == newer["id"] and removed["position"]
    gone = await session.call_tool("get", {"memory_id": newer["id"]})
    assert gone.is_error and "deleted" in gone.content[0].text
    once = {"text": "the pool was resized", "key": "resize-1"}
    kept = [await call(session, "remember", once) for _ in range(2)]
    assert kept[0]["id"] == kept[1]["id"] and kept[1]["duplicate"]  # one memory, not two
    prompted = await call(session, "recall", {"query": "deploy billing", "budget": 200})
    assert "deploy" in prompted["prompt"]
    refused = await session.call_tool("recall", {"query": "what is it"})
    assert refused.is_error and "content words" in refused.content[0].text  # the reason
    return {
        "first": first,
        "found": found,
        "rated": rated,
        "logged": logged,
        "graph": around,
        "chains": chains,
    }


def check_remembered(seen: dict[str, Any]) -> None:
    found = seen["found"]
    assert found["degraded"] is False
    ids = [item["id"] for item in found["items"]]
    assert seen["first"]["id"] in ids
    brought = [item for item in found["items"] if item["source"] != "direct"]
    assert brought and all(item["via"] for item in brought)  # the link that brought each
    assert seen["rated"]["position"] and seen["logged"]["id"]
    assert any(
        edge["target"] == "jitter" or edge["source"] == "jitter" for edge in seen["graph"]["edges"]
    )
    assert "chains" in seen["chains"]


def test_the_tools_over_stdio_remember_recall_and_keep_tenants_apart(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        acme = cli_json("keys", "create", "--tenant", "acme", "--agent", "assistant", url=up.url)
        seen = anyio.run(
            with_session, over_stdio(server_env(up.url, acme["key"])), remember_and_recall
        )
        check_remembered(seen)
        assert cli_json("state", url=up.url)["memories"] == 0  # the operator's tenant: untouched
        other = cli("audit", "memory", seen["first"]["id"], url=up.url, check=False)
        assert other.returncode != 0 and "unknown" in other.stderr.lower()  # not its tenant's
    finally:
        up.stop()


def test_the_tools_over_streamable_http(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assocmem.api.cli",
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=server_env(up.url, up.key),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP server never listened"
                time.sleep(0.2)
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp")
        check_remembered(anyio.run(with_session, transport, remember_and_recall))
    finally:
        server.terminate()
        server.wait(30)
        up.stop()


def test_the_tools_are_listed_as_schemas_without_a_key_or_a_service(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSOCMEM_")}
    env["ASSOCMEM_HOME"] = str(tmp_path)  # no `up` here: no key, no run file
    listed = subprocess.run(
        [sys.executable, "-m", "assocmem.api.cli", "mcp", "--schemas"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    schemas = {tool["name"]: tool for tool in json.loads(listed.stdout)}
    assert set(schemas) == TOOLS
    assert {"budget", "time", "floor", "limit"} <= set(
        schemas["recall"]["parameters"]["properties"]
    )
    assert all("\n " not in tool["description"] for tool in schemas.values())  # no indentation


def test_recall_answers_degraded_within_its_bound_when_the_service_is_gone() -> None:
    gone = f"http://127.0.0.1:{free_port()}"

    async def recall(session: ClientSession) -> tuple[Any, float]:
        start = time.monotonic()
        found = await call(session, "recall", {"query": "anything"})
        return found, time.monotonic() - start

    found, took = anyio.run(with_session, over_stdio(server_env(gone, "amk_x_y")), recall)
    assert found["degraded"] is True and found["items"] == [] and found["reason"]
    assert took < 2.0 + 1.0  # DEGRADE_AFTER, and a second for the round trip through MCP


def test_the_opt_in_forget_tool_erases_a_user(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        env = {**server_env(up.url, up.key), "ASSOCMEM_USER": "alice"}  # the server's scope

        async def remember_then_forget(session: ClientSession) -> Any:
            assert "forget" in {t.name for t in (await session.list_tools()).tools}
            await call(session, "remember", {"text": "alice's card", "concepts": ["card"]})
            assert cli_json("state", url=up.url)["memories"] == 1
            return await call(session, "forget", {"kind": "user", "value": "alice"})

        job = anyio.run(with_session, over_stdio(env, "--allow-forget"), remember_then_forget)
        assert job["job"].startswith("erase-")
        deadline = time.monotonic() + 60
        while cli_json("state", url=up.url)["memories"] != 0:
            assert time.monotonic() < deadline, "the erasure never finished"
            time.sleep(0.5)
        plain = anyio.run(with_session, over_stdio(env), lambda s: s.list_tools())
        assert "forget" not in {t.name for t in plain.tools}  # opt-in only
    finally:
        up.stop()
