"""The asyncio client against the real API: writes are read back by the same client, an
append is stored once however often it is sent, and reads degrade within their bound."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time

import pytest

from assocmem.api.client import async_client
from assocmem.api.client.async_client import AsyncClient
from assocmem.api.errors import ApiError, BadRequest, NotFound, Unauthorized
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import operator_key
from tests.live_api import serving, slow_rebuilds


def test_writes_feedback_and_reads_through_the_async_client(settings: Settings) -> None:
    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key=key) as api:
            first = await api.write("pool sizing", concepts=["queue", "pool"])
            await api.write_many([{"text": "stream trimming", "concepts": ["queue", "stream"]}])
            found = await api.read(concepts=["queue"])  # waits for this client's writes
            assert {i["id"] for i in found["items"]} >= {first["id"]}
            again = await api.write("pool sizing", concepts=["queue", "pool"], key="k1")
            twice = await api.write("pool sizing", concepts=["queue", "pool"], key="k1")
            assert twice["duplicate"] and twice["id"] == again["id"]
            rated = await api.feedback([first["id"]], 1.0, concepts=["queue"])
            assert rated["position"]
            await api.log_activity("rolled back the pool change", category="deploy")
            assert (await api.state())["memories"] == 4  # three notes and the activity
            assert (await api.graph(["queue"]))["edges"]
            with pytest.raises(BadRequest, match="depth"):
                await api.read(concepts=["queue"], depth="deepest")

    with serving(settings) as url:
        asyncio.run(session(url, operator_key(settings)))


def test_an_async_read_degrades_within_its_bound_when_nothing_answers() -> None:
    async def read(port: int) -> tuple[dict, float]:
        async with AsyncClient(f"http://127.0.0.1:{port}", degrade_after=0.5) as api:
            start = time.monotonic()
            found = await api.read(concepts=["anything"])
            return found, time.monotonic() - start

    with socket.create_server(("127.0.0.1", 0)) as silent:
        found, took = asyncio.run(read(silent.getsockname()[1]))
    assert found["degraded"] is True and found["items"] == [] and "0.5 s" in found["reason"]
    assert took < 0.5 + 1.0


def test_an_async_read_of_a_past_state_is_asked_again_while_the_service_rebuilds_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the sync client's: a rebuild past ASSOCMEM_READ_TIMEOUT (a 503 `read_timeout`)
    is asked again until the rebuilt state answers, however long it takes (here the
    transport's own retries of a 503, a second and a half at most, are left out)."""
    monkeypatch.setattr(async_client, "SEND_ATTEMPTS", 1)
    slow_rebuilds(monkeypatch)

    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key=key) as api:
            waits: list[ApiError] = []
            api.on_wait = waits.append
            positions = []
            for start in range(0, 6000, 1000):
                notes = [
                    {"text": f"note {n} on queues", "concepts": ["queue", f"n{n}"]}
                    for n in range(start, start + 1000)
                ]
                positions.append((await api.write_many(notes))[-1]["position"])
            answer = await api.read(concepts=["queue"], as_of=positions[-3], limit=3)
            assert answer["position"] == positions[-3]
            assert len(answer["items"]) == 3
            assert waits and "is being rebuilt from zero" in str(waits[0])

    hurried = dataclasses.replace(settings, read_timeout=0.1)
    with serving(hurried) as url:
        asyncio.run(session(url, operator_key(settings)))


def test_the_async_client_fetches_a_memory_and_forgets_nothing_of_the_sync_ones_calls(
    settings: Settings,
) -> None:
    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key=key) as api:
            written = await api.write("pool sizing", concepts=["queue", "pool"], importance=5)
            newer = await api.write("pool sized", concepts=["queue"], supersedes=[written["id"]])
            found = await api.get_memory(written["id"])
            assert found["superseded_by"] == newer["id"] and found["importance"] == 5
            logged = await api.activities(limit=5)
            assert logged["items"] == []
            ingested = await api.ingest("runbook", "The pool is sized by the queue length.")
            assert ingested["units"] >= 1

    with serving(settings) as url:
        asyncio.run(session(url, operator_key(settings)))


def test_the_async_client_raises_the_same_typed_errors(settings: Settings) -> None:
    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key="not-a-key") as stranger:
            with pytest.raises(Unauthorized):
                await stranger.state()
        async with AsyncClient(url, api_key=key) as api:
            with pytest.raises(NotFound, match="1-0"):
                await api.get_memory("1-0")

    with serving(settings) as url:
        asyncio.run(session(url, operator_key(settings)))


def test_the_async_client_deletes_a_memory(settings: Settings) -> None:
    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key=key) as api:
            gone = await api.write("the pool is sized by hand", concepts=["pool", "size"])
            deleted = await api.delete_memory(gone["id"])
            assert deleted["position"] > gone["position"]
            assert (await api.read(concepts=["pool"]))["items"] == []
            with pytest.raises(NotFound, match="deleted"):
                await api.get_memory(gone["id"])

    with serving(settings) as url:
        asyncio.run(session(url, operator_key(settings)))


def test_the_async_client_writes_an_expiry(settings: Settings) -> None:
    async def session(url: str, key: str) -> None:
        async with AsyncClient(url, api_key=key) as api:
            soon = await api.write("the door code is 4471", expires_at=time.time() + 60)
            assert (await api.get_memory(soon["id"]))["expires_at"] > time.time()

    with serving(settings) as url:
        asyncio.run(session(url, operator_key(settings)))
