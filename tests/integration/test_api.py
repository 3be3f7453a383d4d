"""The HTTP API in-process (FastAPI's TestClient) against a real Redis."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.engine.events.envelope import decode_event
from assocmem.engine.events.memory_accessed import MEMORY_ACCESSED
from assocmem.engine.position import ZERO
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import bearer, operator_key


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as client:
        yield client


def test_write_then_read_sees_the_write_at_once(http: TestClient) -> None:
    written = http.post(
        "/v1/memories", json={"text": "retry with backoff", "concepts": ["Timeout", "backoff"]}
    )
    assert written.status_code == 202
    body = http.post("/v1/read", json={"concepts": ["timeout"]}).json()
    assert [i["id"] for i in body["items"]] == [written.json()["id"]]
    assert body["position"] == written.json()["position"]


def test_a_stopping_api_ends_its_refresh_threads_and_reports_no_outage_of_redis(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """The connections close under the refresh threads' blocking read of the stream, to end
    it at once: that is a stop, not an outage to report."""
    with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as http:
        assert http.post("/v1/memories", json={"text": "x", "concepts": ["a"]}).is_success
        application = http.app.state.application  # type: ignore[attr-defined]
        time.sleep(0.3)  # the refresh threads wait on the stream again
    assert application.folds and not any(thread.is_alive() for thread in application.folds)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_a_stopping_api_logs_the_accesses_of_its_last_reads(settings: Settings) -> None:
    with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as http:
        written = http.post("/v1/memories", json={"text": "x", "concepts": ["a"]}).json()
        assert http.post("/v1/read", json={"concepts": ["a"]}).json()["items"]
    runtime = Runtime.connect(settings)
    try:
        events = [decode_event(raw, p) for p, raw in runtime.log.entries(settings.tenant, ZERO)]
    finally:
        runtime.close()
    accessed = [e.data for e in events if e.type == MEMORY_ACCESSED.name]
    assert accessed == [{"memory_ids": [written["id"]], "hits": [1]}]


def test_concepts_are_extracted_when_not_given(http: TestClient) -> None:
    written = http.post(
        "/v1/memories", json={"text": "The requests timed out after retries"}
    ).json()
    assert {"retri", "request"} <= set(written["concept_keys"])
    assert {"retries", "requests"} <= set(written["concepts"])  # the words as written
    assert (
        http.post("/v1/read", json={"text": "retrying requests"}).json()["items"][0]["id"]
        == written["id"]
    )


def test_reads_of_a_rebuilt_state_run_off_the_event_loop_within_the_read_budget(
    settings: Settings,
) -> None:
    """A read of the live state answers on the event loop; one that rebuilds a state
    (`as_of`, `without_feedback`: seconds of folding at a million events) runs in a thread
    under ASSOCMEM_READ_TIMEOUT, so it never holds the other requests for that long."""
    hurried = dataclasses.replace(settings, read_timeout=1e-9)  # no thread hand-off fits
    with TestClient(create_app(hurried), headers=bearer(operator_key(settings))) as http:
        written = http.post("/v1/memories", json={"text": "x", "concepts": ["a"]}).json()
        live = [http.post("/v1/read", json={"concepts": ["a"]}) for _ in range(20)]
        assert any(a.status_code == 200 for a in live)  # on the loop once nobody folds
        for rebuilt in ({"as_of": written["position"]}, {"without_feedback": True}):
            answer = http.post("/v1/read", json={"concepts": ["a"], **rebuilt})
            assert answer.status_code == 503, rebuilt
            assert "ASSOCMEM_READ_TIMEOUT" in answer.json()["detail"]


BAD_REQUESTS = [
    ("post", "/v1/memories", {"json": {"text": "   "}}, "text '   ' is empty"),
    (
        "post",
        "/v1/memories",
        {"json": {"text": "x", "importance": 9}},
        "importance 9 is out of range",
    ),
    ("post", "/v1/memories/batch", {"json": {"items": []}}, "items has 0 items"),
    (
        "post",
        "/v1/memories/batch",
        {"json": {"items": [{"text": "ok"}, {"text": ""}]}},
        "items[1].text",
    ),
    (
        "post",
        "/v1/feedback",
        {"json": {"ids": ["1-0"], "outcome": 1.5, "concepts": ["a"]}},
        "outcome 1.5 is out of range: expected -1.0 to 1.0",
    ),
    (
        "post",
        "/v1/feedback",
        {"json": {"ids": ["1-0"], "outcome": 1, "concepts": ["a"]}},
        "ids ['1-0'] are unknown",
    ),
    (
        "post",
        "/v1/feedback",
        {"json": {"ids": [], "outcome": 1, "concepts": ["a"]}},
        "ids has 0 items",
    ),
    ("post", "/v1/read", {"json": {}}, "concepts and text are both empty"),
    (
        "post",
        "/v1/read",
        {"json": {"concepts": ["a"], "as_of": "yesterday"}},
        "as_of 'yesterday' is neither a stream position nor an ISO time",
    ),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "limit": 0}}, "limit 0 is out of range"),
    (
        "get",
        "/v1/diff",
        {"params": {"first": "0-0", "second": "now"}},
        "second 'now' is neither a stream position nor an ISO time",
    ),
    ("get", "/v1/graph", {"params": {"hops": 1}}, "concepts"),
    (
        "get",
        "/v1/graph",
        {"params": {"concepts": [f"c{i}" for i in range(21)]}},
        "concepts has 21 items: expected 1 to 20",
    ),
    (  # counted as given, not as the 20 distinct ones they name (the schema's maxItems)
        "get",
        "/v1/graph",
        {"params": {"concepts": ["", *(f"c{i}" for i in range(19)), "C0"]}},
        "concepts has 21 items: expected 1 to 20",
    ),
    (
        "get",
        "/v1/graph",
        {"params": {"concepts": ["a"], "hops": 4}},
        "hops 4 is out of range: expected 1 to 3",
    ),
    (
        "post",
        "/v1/feedback",
        {"json": {"ids": ["1-0"], "outcome": "very", "concepts": ["a"]}},
        "outcome 'very' is invalid",
    ),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "depth": "deeper"}}, "depth 'deeper'"),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "tz": "Mars/Base"}}, "tz 'Mars/Base'"),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "time": "whenever"}}, "time 'whenever'"),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "start": 5}}, "start and end go together"),
    ("post", "/v1/read", {"json": {"concepts": ["a"], "token_budget": 3}}, "token_budget 3"),
    ("post", "/v1/chain", {"json": {"concepts": ["a"]}}, "concepts has 1 items"),
    (
        "post",
        "/v1/memories",
        {"json": {"text": "x", "supersedes": ["1-0"]}},
        "supersedes ['1-0'] are unknown",
    ),
    ("post", "/v1/memories/1-0/importance", {"json": {"importance": 3}}, "id ['1-0'] are unknown"),
    ("post", "/v1/memories/1-0/importance", {"json": {"importance": 7}}, "importance 7"),
    ("post", "/v1/activities", {"json": {"text": "x", "category": " "}}, "category ' '"),
    ("get", "/v1/activities", {"params": {"date": "28/11"}}, "date '28/11' is not a date"),
    ("get", "/v1/activities/summary", {"params": {"period": "year"}}, "period 'year'"),
    ("post", "/v1/documents", {"json": {"title": "t", "text": "a"}}, "no unit with two"),
    ("post", "/v1/documents", {"json": {"title": "t", "text": "a b", "scope": "page"}}, "scope"),
]


@pytest.mark.parametrize("method, path, kwargs, message", BAD_REQUESTS)
def test_bad_input_gets_a_4xx_naming_field_and_value_and_the_log_gets_nothing(
    http: TestClient, runtime: Runtime, method: str, path: str, kwargs: dict, message: str
) -> None:
    response = getattr(http, method)(path, **kwargs)
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"] == "application/problem+json"
    assert message in response.json()["detail"]
    assert runtime.log.length("default") == 0


def test_graph_reports_count_learned_and_last_change(http: TestClient) -> None:
    ids = [
        http.post("/v1/memories", json={"text": "n", "concepts": c}).json()["id"]
        for c in (["a", "b"], ["a", "b"], ["b", "c"])
    ]
    fb = http.post("/v1/feedback", json={"ids": [ids[2]], "outcome": 1, "concepts": ["a"]}).json()
    edges = http.get("/v1/graph", params={"concepts": ["a"], "hops": 1}).json()["edges"]
    assert edges == [
        {
            "source": "a",
            "target": "b",
            "source_key": "a",
            "target_key": "b",
            "weight": 3.0,
            "count": 2,
            "learned": 1.0,
            "changed_at": fb["position"],
        },
        {
            "source": "a",
            "target": "c",
            "source_key": "a",
            "target_key": "c",
            "weight": 1.0,
            "count": 0,
            "learned": 1.0,
            "changed_at": fb["position"],
        },
    ]


def test_openapi_docs_are_served(http: TestClient) -> None:
    assert "/v1/read" in http.get("/openapi.json").json()["paths"]
    assert http.get("/docs").status_code == 200


def test_the_api_folds_new_events_without_waiting_for_a_read(
    http: TestClient, runtime: Runtime
) -> None:
    from assocmem.engine.events.envelope import Event

    data = {"text": "written around the API", "concepts": ["x"], "importance": 3, "extractor": "t"}
    last = runtime.log.append("default", [Event("memory.written", "default", "a", 1.0, data)])[-1]
    deadline = time.monotonic() + 20
    while http.get("/v1/health").json()["served_position"] != str(last.position):
        assert time.monotonic() < deadline, "the background refresh never folded the new event"
        time.sleep(0.05)


SERVE_AND_REPORT_BLAS_THREADS = """
import sys
from fastapi.testclient import TestClient
from threadpoolctl import threadpool_info
from assocmem.api.http.app import create_app
from assocmem.workers.runtime.settings import Settings

before = max(pool["num_threads"] for pool in threadpool_info())
with TestClient(create_app(Settings(redis_url=sys.argv[1], home=sys.argv[2]))):
    print(before, max(pool["num_threads"] for pool in threadpool_info()))
"""


def test_the_api_runs_numpy_math_on_one_thread(settings: Settings) -> None:
    """A deep read's PageRank solve split over OpenBLAS threads costs 40 times its own work."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SERVE_AND_REPORT_BLAS_THREADS,
            settings.redis_url,
            str(settings.home),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    before, serving = map(int, done.stdout.split())
    if before == 1:
        pytest.skip("numpy's BLAS runs on one thread here anyway: nothing to limit")
    assert serving == 1


def test_graph_names_the_concepts_it_has_never_seen(http: TestClient) -> None:
    """Not only "(no links)": a concept never written is told apart from one without links."""
    http.post("/v1/memories", json={"text": "n", "concepts": ["a", "b"]})
    http.post("/v1/memories", json={"text": "m", "concepts": ["lonely"]})
    found = http.get("/v1/graph", params={"concepts": ["a", "lonely", "never"]}).json()
    assert found["unknown_concepts"] == ["never"]
    assert [(e["source"], e["target"]) for e in found["edges"]] == [("a", "b")]
