"""Recall features through the HTTP API (in-process app, real Redis): each stage must contribute."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.engine.recall.prompt import count_tokens
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import bearer, operator_key

DAY = 86_400.0


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as client:
        yield client


def write(http: TestClient, text: str, concepts: list[str] | None = None, **fields) -> str:
    response = http.post("/v1/memories", json={"text": text, "concepts": concepts, **fields})
    assert response.status_code == 202, response.text
    return response.json()["id"]


def read(http: TestClient, **body) -> dict:
    response = http.post("/v1/read", json={"record_access": False, **body})
    assert response.status_code == 200, response.text
    return response.json()


def by_id(result: dict) -> dict[str, dict]:
    return {item["id"]: item for item in result["items"]}


def test_association_only_memory_disappears_when_expansion_is_off(http: TestClient) -> None:
    for n in range(3):
        write(http, f"retry note {n}", ["timeout", "retry"])
    backoff = write(http, "exponential backoff with jitter", ["retry", "backoff"])
    standard = by_id(read(http, concepts=["timeout"]))
    assert standard[backoff]["source"] == "association"
    assert standard[backoff]["via"][0]["from"] == "timeout"
    assert backoff not in by_id(read(http, concepts=["timeout"], depth="fast"))


def test_deep_read_returns_the_chain_and_a_memory_two_links_away(http: TestClient) -> None:
    for _ in range(2):
        write(http, "timeouts need retries", ["timeout", "retry"])
        write(http, "retries need backoff", ["retry", "backoff"])
        write(http, "backoff needs jitter", ["backoff", "jitter"])
    jitter_only = write(http, "jitter spreads load", ["jitter", "load"])
    assert jitter_only not in by_id(read(http, concepts=["timeout"]))
    deep = read(http, concepts=["timeout", "jitter"], depth="deep")
    assert deep["chains"][0]["path"] == ["timeout", "retry", "backoff", "jitter"]
    assert deep["chains"][0]["path_keys"] == ["timeout", "retri", "backoff", "jitter"]
    assert deep["chains"][0]["hidden"] == ["retry", "backoff"]
    assert all(hop["evidence"] for hop in deep["chains"][0]["hops"])
    chain = http.post("/v1/chain", json={"concepts": ["timeout", "jitter"]}).json()
    assert chain["chains"][0]["path"] == ["timeout", "retry", "backoff", "jitter"]
    two_away = read(http, concepts=["timeout"], depth="deep")
    assert {"backoff", "jitter"} & {c["concept"] for c in two_away["chain_concepts"]}
    assert any(item["source"] == "chain" and "chain" in item for item in two_away["items"])


def test_named_concepts_and_text_meet_in_either_direction(http: TestClient) -> None:
    tagged = write(http, "the billing API gave up", ["Timeouts", "Billing"])
    extracted = write(http, "the search API retries twice")
    found = by_id(read(http, text="timed out", depth="fast"))
    assert found[tagged]["source"] == "direct"
    found = by_id(read(http, concepts=["Retry"], depth="fast"))
    assert found[extracted]["source"] == "direct"


def test_a_typo_finds_the_memory_as_fuzzy(http: TestClient) -> None:
    mid = write(http, "kubernetes operator reconcile loop")
    result = read(http, concepts=["reconcle"], depth="fast")
    assert result["items"][0]["id"] == mid and result["items"][0]["source"] == "fuzzy"
    assert result["matches"][0]["key"] == "reconcil"
    assert result["matches"][0]["concept"] == "reconcile"  # the word as written


def test_time_expression_in_the_query_ranks_that_day_first(http: TestClient) -> None:
    now = time.time()
    yesterday = write(http, "deployed the billing service", ts=now - DAY)
    earlier = write(http, "deployed the search service", ts=now - 10 * DAY)
    result = read(http, text="what did I deploy yesterday")
    assert result["time"]["applied"] and result["time"]["expression"] == "yesterday"
    assert [i["id"] for i in result["items"]] == [yesterday, earlier]
    assert result["items"][1]["score"] < result["items"][0]["score"] / 1.5
    described = read(http, text="the article mentioned yesterday's deploy")
    assert not described["time"]["applied"]
    assert len(described["items"]) == 2
    assert len(read(http, text="deploy", time="last 30 days")["items"]) == 2


def test_a_date_too_unsure_to_apply_still_keeps_its_day_above_links_to_it(
    http: TestClient,
) -> None:
    """A date after a container word ("document") is not applied as a range, but the
    memory written that day carries it: notes linked to the date only through their
    author's name (hers carry it twice) do not pass it (Query.time_hint)."""
    later = datetime(2021, 3, 1, tzinfo=UTC).timestamp()
    for n in range(2):
        write(http, f"coc update {n}", ["ann", "vance", "coc", "2019-09-24", "update"], ts=later)
    for n in range(6):
        write(http, f"her note {n}", ["ann", "vance", "add", "code", f"topic{n}"], ts=later)
    for n, word in enumerate(["code"] * 20 + ["conduct"] * 20 + ["add"] * 20):
        write(http, f"filler {n}", [word, f"filler{n}"], ts=later)
    day = datetime(2019, 9, 24, 12, tzinfo=UTC).timestamp()
    answer = write(http, "add a code of conduct", ["add", "code", "conduct", "jeff"], ts=day)
    result = read(http, text="add a Code of Conduct document, 2019-09-24", limit=3)
    assert not result["time"]["applied"]
    assert result["items"][2]["id"] == answer, [i["text"] for i in result["items"]]


def test_superseded_memory_is_hidden_unless_history_is_asked(http: TestClient) -> None:
    old = write(http, "the wifi password is hunter2", ["wifi", "password"])
    new = write(http, "the wifi password is now swordfish", ["wifi", "password"], supersedes=[old])
    assert [i["id"] for i in read(http, concepts=["wifi"])["items"]] == [new]
    history = by_id(read(http, concepts=["wifi"], history=True))
    assert history[old]["superseded_by"] == new


def test_importance_and_accesses_change_the_ranking(http: TestClient) -> None:
    first = write(http, "cache invalidation note", ["cache", "invalidation"])
    second = write(http, "cache warming note", ["cache", "warming"])
    assert [i["id"] for i in read(http, concepts=["cache"])["items"]][0] == second
    assert http.post(f"/v1/memories/{first}/importance", json={"importance": 5}).status_code == 202
    assert [i["id"] for i in read(http, concepts=["cache"])["items"]][0] == first
    for _ in range(3):
        http.post("/v1/read", json={"concepts": ["warming"], "context": False})
    http.app.state.application.accesses.flush()
    accessed = by_id(read(http, concepts=["cache"]))
    assert accessed[second]["accesses"] == 3 and accessed[first]["accesses"] == 0


def test_prompt_text_fits_the_budget_and_carries_more_memories_as_topics(http: TestClient) -> None:
    body = "Step one of the runbook. " + "Restart the worker pool and drain the queue. " * 20
    for n in range(6):
        write(http, f"runbook {n}: rollback\n{body}", ["rollback", f"runbook{n}"])
    small = read(http, concepts=["rollback"], token_budget=120)["prompt"]
    large = read(http, concepts=["rollback"], token_budget=4000)["prompt"]
    one_body = count_tokens(
        "Step one of the runbook. " + "Restart the worker pool and drain the queue. " * 20
    )
    assert one_body > 120  # whole memories: not even one would fit
    assert small["tokens"] == count_tokens(small["text"]) <= 120
    assert len(small["layers"]) == 6 and "body" not in small["layers"].values()
    assert large["tokens"] <= 4000 and set(large["layers"].values()) == {"body"}


def test_activity_log_by_day_category_keyword_and_summary(http: TestClient) -> None:
    now = time.time()
    entries = [
        ("deployed v2.3 to staging", "deploy", now - DAY),
        ("rolled back v2.3", "deploy", now - DAY + 60),
        ("reviewed the billing design", "review", now - 3 * DAY),
    ]
    for text, category, ts in entries:
        response = http.post("/v1/activities", json={"text": text, "category": category, "ts": ts})
        assert response.status_code == 202
    yesterday = http.get("/v1/activities", params={"when": "yesterday"}).json()
    assert [i["text"] for i in yesterday["items"]] == [
        "rolled back v2.3",
        "deployed v2.3 to staging",
    ]
    reviews = http.get("/v1/activities", params={"category": "review"}).json()
    assert [i["text"] for i in reviews["items"]] == ["reviewed the billing design"]
    keyword = http.get("/v1/activities", params={"keyword": "billing"}).json()
    assert len(keyword["items"]) == 1
    summary = http.get("/v1/activities/summary", params={"period": "day"}).json()
    assert [p["entries"] for p in summary["periods"]] == [1, 2]
    assert summary["periods"][1]["categories"] == {"deploy": 2}
    # activity entries are memories too, and feed links
    assert read(http, concepts=["staging"])["items"][0]["kind"] == "activity"


def test_a_document_feeds_links_but_is_not_recalled(http: TestClient) -> None:
    text = "Timeouts call for backoff. A timeout without backoff overloads the server. " * 2
    ingested = http.post("/v1/documents", json={"title": "guide", "text": text})
    assert ingested.status_code == 202 and ingested.json()["units"] == 4
    backoff = write(http, "backoff tuning", ["backoff", "tuning"])
    result = read(http, concepts=["timeout"])
    assert [i["id"] for i in result["items"]] == [backoff]
    assert result["items"][0]["source"] == "association"
    assert http.get("/v1/state").json()["documents"] == 1
