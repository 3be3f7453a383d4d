"""The typed clients against the real API: answers come back as models whose fields are the
documented ones (an association's `via` link with its weights included), a degraded read is
a model too, and the async client carries its scope like the sync one."""

from __future__ import annotations

import asyncio
import socket

from assocmem.api.client.typed import AsyncTypedClient, Published, Recall, TypedClient
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import key_for, operator_key
from tests.live_api import serving


def test_a_read_brings_typed_items_with_the_link_that_brought_them(settings: Settings) -> None:
    with serving(settings) as url, TypedClient(url, api_key=operator_key(settings)) as api:
        notes = api.write_many(
            [{"text": f"retry note {n}", "concepts": ["timeout", "retry"]} for n in range(3)]
        )
        backoff = api.write("exponential backoff with jitter", concepts=["retry", "backoff"])
        published = api.publish(
            [
                {"type": "feedback", "ids": [notes[0].id], "outcome": 1.0, "concepts": ["retry"]},
                {"type": "activity", "text": "raised the retry budget", "category": "deploy"},
            ]
        )
        assert all(isinstance(item, Published) for item in published)
        assert published[1].id and published[0].position < published[1].position

        found = api.read(concepts=["timeout"], record_access=False)
        assert isinstance(found, Recall) and not found.degraded
        brought = {item.id: item for item in found.items}
        assert brought[backoff.id].source == "association"
        via = brought[backoff.id].via[0]
        assert (via.from_, via.concept) == ("timeout", "retry") and via.weight > 0

        assert api.state().memories == 5 and api.state().taught_links > 0
        edges = {frozenset((edge.source, edge.target)) for edge in api.graph(["backoff"]).edges}
        assert edges == {frozenset(("backoff", "retry"))}
        assert api.audit_link("timeout", "retry").changes[-1].taught > 0


def test_a_typed_read_degrades_to_an_empty_flagged_answer() -> None:
    async def degraded_async(url: str) -> Recall:
        async with AsyncTypedClient(url, degrade_after=0.5) as api:
            return await api.read(concepts=["anything"])

    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with TypedClient(url, degrade_after=0.5) as api:
            found = api.read(concepts=["anything"])
            chains = api.find_chain(["a", "b"])
        found_async = asyncio.run(degraded_async(url))
    for answer in (found, chains, found_async):
        assert answer.degraded and answer.reason and answer.position is None
    assert found.items == [] == found_async.items and chains.chains == []


def test_the_async_client_reads_within_its_scope(settings: Settings) -> None:
    key = key_for(settings, "default", "assistant")

    async def session(url: str) -> tuple[set[str], set[str]]:
        alice = AsyncTypedClient(url, api_key=key, scope={"user": "alice"})
        bob = AsyncTypedClient(url, api_key=key, scope={"user": "bob"})
        nobody = AsyncTypedClient(url, api_key=key)
        async with alice, bob, nobody:
            await nobody.publish(
                [{"type": "memory", "text": "cards renew yearly", "concepts": ["card"]}]
            )
            await bob.write("bob's card expired", concepts=["card"])
            alice.raw.position = bob.position  # wait for the others' writes too
            await alice.write("alice's card was declined", concepts=["card"])
            seen_by_alice = {item.text for item in (await alice.read(concepts=["card"])).items}
            bob.raw.position = alice.position
            seen_by_bob = {item.text for item in (await bob.read(concepts=["card"])).items}
        return seen_by_alice, seen_by_bob

    with serving(settings) as url:
        seen_by_alice, seen_by_bob = asyncio.run(session(url))
    assert seen_by_alice == {"alice's card was declined", "cards renew yearly"}
    assert seen_by_bob == {"bob's card expired", "cards renew yearly"}
