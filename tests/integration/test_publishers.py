"""8 publisher processes append 25,000 events each straight to the stream, sending batches
again at random (a retry after a lost answer) and delivering some twice: the log holds each
event exactly once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assocmem.api.client.publisher import Publisher
from assocmem.workers.errors import UnknownMemory
from assocmem.workers.runtime.services import Runtime

PUBLISHERS = 8
EVENTS_EACH = 25_000
BATCH = 500
PUBLISH = """
import random, sys
from assocmem.api.client.publisher import Publisher
url, name, total, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(name)
with Publisher(url, "default", name) as publisher:
    for start in range(0, total, batch):
        items = [
            {"text": f"{name} event {i}", "concepts": [name, f"c{i % 7}"], "key": f"{name}-{i}"}
            for i in range(start, start + batch)
        ]
        sends = 1 + (rng.random() < 0.2) + (rng.random() < 0.1)  # a retry, a duplicate delivery
        for _ in range(sends):
            half = rng.randrange(1, batch)  # and a redelivery cut differently
            written = publisher.write_many(items[:half]) + publisher.write_many(items[half:])
        assert len({w["position"] for w in written}) == batch
"""


@pytest.mark.slow
def test_publishers_retrying_and_delivering_twice_store_each_event_once(
    redis_url: str, runtime: Runtime
) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", PUBLISH, redis_url, f"p{n}", str(EVENTS_EACH), str(BATCH)]
        )
        for n in range(PUBLISHERS)
    ]
    assert [p.wait(600) for p in processes] == [0] * PUBLISHERS
    assert runtime.log.length("default") == PUBLISHERS * EVENTS_EACH


def test_a_publisher_applies_the_application_s_rules(redis_url: str, runtime: Runtime) -> None:
    with Publisher(redis_url, "acme", "ingest") as publisher:
        [written] = publisher.write_many([{"text": "the billing job timed out"}])
        assert "billing" in written["concepts"]  # extracted, as the API would
        again = publisher.write_many([{"text": "the billing job timed out", "key": "k"}])
        assert publisher.write_many([{"text": "the billing job timed out", "key": "k"}]) == [
            {**again[0], "duplicate": True}
        ]
        rated = publisher.feedback([written["id"]], 1.0, concepts=["timeout"])
        assert rated["position"]
        with pytest.raises(UnknownMemory):
            publisher.feedback(["1-0"], 1.0, concepts=["x"])
    assert runtime.log.length("acme") == 3
