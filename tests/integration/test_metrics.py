"""/metrics as Prometheus scrapes it: what was appended, refused and read, and how far each
tenant's snapshots are behind its log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from assocmem.api.http.app import create_app
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import bearer, key_for, operator_key


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def scrape(http: TestClient, key: dict[str, str]) -> dict[tuple[str, tuple], float]:
    answer = http.get("/metrics", headers=key)
    assert answer.status_code == 200, answer.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def test_metrics_count_appends_refusals_reads_and_the_fold_lag(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    operator = bearer(operator_key(settings))
    agent = bearer(key_for(settings, "acme"))
    for text in ("billing timeout", "billing retry"):
        http.post("/v1/memories", json={"text": text, "concepts": text.split()}, headers=agent)
    http.post("/v1/read", json={"concepts": ["billing"], "depth": "deep"}, headers=agent)
    http.post("/v1/read", json={"concepts": ["billing"]})  # no key
    http.post("/v1/read", json={"concepts": 7}, headers=agent)  # invalid
    seen = scrape(http, operator)
    assert seen[("assocmem_appended_events_total", (("type", "memory.written"),))] == 2
    assert seen[("assocmem_refused_requests_total", (("reason", "unauthorized"),))] == 1
    assert seen[("assocmem_refused_requests_total", (("reason", "invalid"),))] == 1
    assert seen[("assocmem_read_seconds_count", (("depth", "deep"),))] == 1
    acme = (("tenant", "acme"),)
    assert seen[("assocmem_log_events", acme)] == 2
    assert seen[("assocmem_fold_lag_events", acme)] == 2  # no snapshot yet
    assert seen[("assocmem_fold_lag_seconds", acme)] > 0  # and they have waited
    assert ("assocmem_snapshot_bytes", acme) not in seen or seen[
        ("assocmem_snapshot_bytes", acme)
    ] == 0
    fold_and_publish(runtime, "acme", force=True)
    after = scrape(http, operator)
    assert after[("assocmem_fold_lag_events", acme)] == 0
    assert after[("assocmem_fold_lag_seconds", acme)] == 0
    assert after[("assocmem_snapshot_bytes", acme)] > 0
    assert after[("assocmem_dead_letters", acme)] == 0


def test_metrics_name_every_tenant_so_only_an_operator_key_reads_them(
    http: TestClient, settings: Settings
) -> None:
    admin = bearer(key_for(settings, "acme", "boss", ("read", "admin")))
    assert http.get("/metrics", headers=admin).status_code == 403
    assert http.get("/metrics").status_code == 401
