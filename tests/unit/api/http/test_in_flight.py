"""The cap on requests in flight: one over it gets a 503 with Retry-After, and a request
that finished frees its place."""

from __future__ import annotations

import asyncio

from assocmem.api.http.in_flight import InFlight


def test_a_request_over_the_cap_gets_a_503_and_a_finished_one_frees_its_place() -> None:
    release = asyncio.Event()

    async def slow(scope, receive, send) -> None:
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def run() -> list[int]:
        capped = InFlight(slow, limit=1)
        statuses: list[int] = []

        async def request() -> None:
            async def receive():
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message) -> None:
                if message["type"] == "http.response.start":
                    statuses.append(message["status"])

            await capped(
                {"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send
            )

        first = asyncio.create_task(request())
        await asyncio.sleep(0)
        await request()  # while the first is in flight
        release.set()
        await first
        await request()  # its place is free again
        return statuses

    assert asyncio.run(run()) == [503, 200, 200]
