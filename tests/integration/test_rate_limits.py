"""Rates per API key, shared by every replica: a key over its rate gets a 429 with
Retry-After and a machine-readable code, nothing of the refused request reaches the log, and
another key is not slowed."""

from __future__ import annotations

import dataclasses
import time

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.workers.errors import SettingError
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings, load_settings
from tests.api_keys import bearer, key_for

READ = {"concepts": ["billing"]}


def test_a_key_over_its_request_rate_is_told_when_to_retry_on_every_replica(
    settings: Settings,
) -> None:
    limited = dataclasses.replace(settings, key_requests=5)
    greedy, calm = (
        bearer(key_for(settings, "default", "greedy")),
        bearer(key_for(settings, "default")),
    )
    with TestClient(create_app(limited)) as one, TestClient(create_app(limited)) as two:
        answers = [
            replica.post("/v1/read", json=READ, headers=greedy).status_code
            for replica in (one, two, one, two, one)
        ]
        assert answers == [200] * 5
        refused = two.post("/v1/read", json=READ, headers=greedy)
        assert refused.status_code == 429
        assert refused.json()["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        assert "ASSOCMEM_KEY_REQUESTS" in refused.json()["detail"]
        assert one.post("/v1/read", json=READ, headers=calm).status_code == 200
        deadline = time.monotonic() + 5
        while one.post("/v1/read", json=READ, headers=greedy).status_code == 429:
            assert time.monotonic() < deadline, "the key never got its rate back"
            time.sleep(0.2)


def test_a_batch_over_the_event_rate_appends_nothing(settings: Settings, runtime: Runtime) -> None:
    limited = dataclasses.replace(settings, key_events=1000)
    writer = bearer(key_for(settings, "default", "writer"))
    items = [{"text": f"note {i}", "concepts": ["n"]} for i in range(600)]
    with TestClient(create_app(limited)) as http:
        assert (
            http.post("/v1/memories/batch", json={"items": items}, headers=writer).status_code
            == 202
        )
        refused = http.post("/v1/memories/batch", json={"items": items}, headers=writer)
        assert refused.status_code == 429 and "ASSOCMEM_KEY_EVENTS" in refused.json()["detail"]
        assert runtime.log.length("default") == 600


def test_a_rate_below_a_full_batch_is_refused_at_start() -> None:
    with pytest.raises(SettingError, match="ASSOCMEM_KEY_EVENTS.*1000 or more"):
        load_settings({"ASSOCMEM_KEY_EVENTS": "500"})
    assert load_settings({"ASSOCMEM_KEY_EVENTS": "0"}).key_events == 0  # no limit
