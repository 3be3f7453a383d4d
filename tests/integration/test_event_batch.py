"""A batch of events of every kind: appended atomically and in order, per-item answers,
stored once however often it is sent, refused whole (naming the item) when one is wrong."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import bearer, key_for


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def test_a_mixed_batch_is_appended_in_order_with_an_answer_per_item(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    agent = bearer(key_for(settings, "default", "agent"))
    note = http.post(
        "/v1/memories", json={"text": "pool sizing", "concepts": ["pool"]}, headers=agent
    )
    memory_id = note.json()["id"]
    items = [
        {"type": "memory", "text": "queue depth alarm", "concepts": ["queue"], "key": "m1"},
        {"type": "activity", "text": "restarted the queue", "category": "ops", "key": "a1"},
        {"type": "feedback", "ids": [memory_id], "outcome": 1.0, "concepts": ["pool"], "key": "f1"},
        {"type": "importance", "memory_id": memory_id, "importance": 5, "key": "i1"},
    ]
    first = http.post("/v1/events/batch", json={"items": items}, headers=agent)
    assert first.status_code == 202, first.text
    answers = first.json()["items"]
    assert [a["duplicate"] for a in answers] == [False] * 4
    assert answers[0]["concepts"] == ["queue"] and answers[2]["concept_keys"] == ["pool"]
    positions = [a["position"] for a in answers]
    assert positions == sorted(positions)
    again = http.post("/v1/events/batch", json={"items": items}, headers=agent).json()["items"]
    assert [a["position"] for a in again] == positions and all(a["duplicate"] for a in again)
    assert runtime.log.length("default") == 5
    state = http.post("/v1/read", json={"concepts": ["pool"]}, headers=agent).json()
    assert state["items"][0]["importance"] == 5


def test_one_wrong_item_refuses_the_batch_and_names_it(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    agent = bearer(key_for(settings, "default", "agent"))
    items = [
        {"type": "memory", "text": "fine", "concepts": ["fine"]},
        {"type": "feedback", "ids": ["99-0"], "outcome": 1.0, "concepts": ["x"]},
    ]
    refused = http.post("/v1/events/batch", json={"items": items}, headers=agent)
    assert refused.status_code == 404 and "items[1]" in refused.json()["detail"]
    writer = bearer(key_for(settings, "default", "writer", ("write",)))
    rating = [{"type": "feedback", "ids": ["1-0"], "outcome": 1.0, "concepts": ["x"]}]
    assert http.post("/v1/events/batch", json={"items": rating}, headers=writer).status_code == 403
    bad = [{"type": "importance", "memory_id": "1-0", "importance": 9}]
    answer = http.post("/v1/events/batch", json={"items": bad}, headers=agent)
    assert answer.status_code == 422 and "items[0]" in answer.json()["detail"]
    assert runtime.log.length("default") == 0


def test_a_batch_wrong_in_every_item_is_refused_with_the_first_errors_and_their_count(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    agent = bearer(key_for(settings, "default", "agent"))
    items = [{"type": "memory", "text": f"note {n}", "time": n} for n in range(1000)]
    answer = http.post("/v1/events/batch", json={"items": items}, headers=agent)
    detail = answer.json()["detail"]
    assert answer.status_code == 422 and detail.startswith("items[0].memory.time 0 is invalid")
    assert "items[9].memory.time" in detail and "items[10]" not in detail
    assert detail.endswith("and 990 more errors (1000 in all)") and len(detail) < 2000
    assert runtime.log.length("default") == 0
