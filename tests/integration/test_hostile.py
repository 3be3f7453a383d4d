"""Inputs a hostile or careless client sends: each is refused with a 4xx that names the
field and quotes at most the start of the value, and none reaches the log."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import orjson
import pytest
from fastapi.testclient import TestClient
from limits.storage import MemoryStorage

from assocmem.api.http.app import create_app
from assocmem.workers.errors import RateLimited
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.store.redis.rate_limits import RateLimits
from tests.api_keys import bearer, operator_key


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as client:
        yield client


def raw(http: TestClient, path: str, body: bytes) -> object:
    return http.post(path, content=body, headers={"content-type": "application/json"})


NOT_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"1e400"]


@pytest.mark.parametrize("path", ["/v1/memories", "/v1/activities"])
@pytest.mark.parametrize("number", NOT_NUMBERS)
def test_a_time_that_is_no_finite_number_is_refused_not_acknowledged(
    http: TestClient, runtime: Runtime, path: str, number: bytes
) -> None:
    response = raw(http, path, b'{"text": "deployed", "ts": %s}' % number)
    assert response.status_code == 422, response.text
    assert "ts" in response.json()["detail"]
    assert runtime.log.length("default") == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({"text": "x", "ts": False}, "ts"),
        ({"text": "x", "importance": True}, "importance"),
        ({"text": "x", "importance": "3"}, "importance"),
        ({"text": "x", "importance": 4.5}, "importance"),  # 4.0 is the integer 4
        ({"text": 5}, "text"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_not_coerced(
    http: TestClient, runtime: Runtime, body: dict, field: str
) -> None:
    response = http.post("/v1/memories", json=body)
    assert response.status_code == 422 and response.json()["detail"].startswith(field)
    assert runtime.log.length("default") == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({"concepts": ["a"], "floor": False}, "floor"),
        ({"concepts": ["a"], "without_feedback": 0}, "without_feedback"),
        ({"concepts": ["a"], "now": "1700000000"}, "now"),
        ({"concepts": ["a"], "limit": "10"}, "limit"),
    ],
)
def test_a_read_of_the_wrong_type_is_refused(http: TestClient, body: dict, field: str) -> None:
    response = http.post("/v1/read", json=body)
    assert response.status_code == 422 and response.json()["detail"].startswith(field)


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/v1/memories", b'{"text": "\\ud800 broken"}', "text"),
        ("/v1/memories", b'{"text": "ok", "concepts": ["\\udfff"]}', "concepts[0]"),
        ("/v1/activities", b'{"text": "ok", "tags": ["\\ud800"]}', "tags[0]"),
        ("/v1/read", b'{"text": "\\ud800"}', "text"),
    ],
)
def test_a_lone_surrogate_is_a_422_naming_the_field(
    http: TestClient, runtime: Runtime, path: str, body: bytes, field: str
) -> None:
    response = raw(http, path, body)
    assert response.status_code == 422, response.text
    assert response.json()["detail"].startswith(f"{field} ")
    assert "not valid Unicode" in response.json()["detail"]
    assert runtime.log.length("default") == 0


@pytest.mark.parametrize(
    "method, path, kwargs, field",
    [
        (
            "post",
            "/v1/read",
            {"json": {"concepts": ["a"], "as_of": "99999999999999999999-0"}},
            "as_of",
        ),
        (
            "post",
            "/v1/read",
            {"json": {"concepts": ["a"], "after": "1-99999999999999999999"}},
            "after",
        ),
        ("get", "/v1/state", {"params": {"as_of": "99999999999999999999-0"}}, "as_of"),
        ("post", "/v1/read", {"content": b'{"concepts": ["a"], "now": NaN}'}, "now"),
        ("post", "/v1/read", {"json": {"concepts": ["a"], "now": 1e300}}, "now"),
    ],
)
def test_positions_and_times_out_of_range_are_a_4xx_not_a_500(
    http: TestClient, method: str, path: str, kwargs: dict, field: str
) -> None:
    if "content" in kwargs:
        kwargs = {**kwargs, "headers": {"content-type": "application/json"}}
    response = getattr(http, method)(path, **kwargs)
    assert 400 <= response.status_code < 500, response.text
    assert field in response.json()["detail"]


def test_a_huge_bad_value_is_quoted_by_its_start_only(http: TestClient) -> None:
    response = http.post("/v1/memories", json={"text": "x", "importance": "9" * 1_000_000})
    assert response.status_code == 422
    assert len(response.content) < 500


def test_a_read_of_100000_concepts_or_of_10_mb_of_text_is_refused(http: TestClient) -> None:
    many = http.post("/v1/read", json={"concepts": [f"c{n}" for n in range(100_000)]})
    assert many.status_code in (413, 422)
    long = http.post("/v1/read", json={"text": "word " * 3000})
    assert long.status_code == 422 and "text has 15000 characters" in long.json()["detail"]


def test_a_body_over_the_limit_is_refused_before_it_is_read(settings: Settings) -> None:
    small = dataclasses.replace(settings, max_body=1000)
    with TestClient(create_app(small), headers=bearer(operator_key(small))) as http:
        told = http.post("/v1/memories", json={"text": "x" * 5000})
        assert told.status_code == 413 and "at most 1000" in told.json()["detail"]
        chunks = (b'{"text": "' + b"x" * 500, b"x" * 800 + b'"}')
        streamed = http.post(
            "/v1/memories", content=iter(chunks), headers={"content-type": "application/json"}
        )
        assert streamed.status_code == 413
        assert http.post("/v1/memories", json={"text": "fits"}).status_code == 202


def test_a_key_used_again_with_another_body_is_a_409_and_with_the_same_body_the_first_answer(
    http: TestClient, runtime: Runtime
) -> None:
    first = http.post("/v1/memories", json={"text": "deployed billing", "key": "k-1"})
    again = http.post("/v1/memories", json={"text": "deployed billing", "key": "k-1"})
    other = http.post("/v1/memories", json={"text": "rolled back billing", "key": "k-1"})
    assert first.status_code == again.status_code == 202
    assert {**again.json(), "duplicate": False} == first.json()
    assert other.status_code == 409 and "key 'k-1'" in other.json()["detail"]
    batch = http.post(
        "/v1/memories/batch",
        json={"items": [{"text": "new rollout"}, {"text": "other rollout", "key": "k-1"}]},
    )
    assert batch.status_code == 409
    assert runtime.log.length("default") == 1  # nothing of the refused batch


def test_every_failure_is_problem_json_and_the_document_says_so(http: TestClient) -> None:
    for response in (
        http.get("/v1/nowhere"),
        http.post("/v1/read", content=b"{not json", headers={"content-type": "application/json"}),
        http.put("/v1/read", json={}),
    ):
        assert 400 <= response.status_code < 500
        assert response.headers["content-type"] == "application/problem+json"
        assert set(response.json()) == {"type", "title", "status", "detail"}
    assert http.put("/v1/activities").headers["allow"] == "GET, POST"
    document = http.get("/openapi.json").json()
    read = document["paths"]["/v1/read"]["post"]["responses"]
    assert read["422"]["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/Problem"
    }
    assert read["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/ReadOut")
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_a_request_for_another_host_is_refused(http: TestClient) -> None:
    response = http.get("/v1/health", headers={"host": "attacker.example"})
    assert response.status_code == 400 and "attacker.example" in response.json()["detail"]
    assert http.get("/v1/health", headers={"host": "127.0.0.1:8765"}).status_code == 200
    assert orjson.loads(http.get("/v1/health").content)["status"] == "ok"


@pytest.mark.parametrize("depth", [100, 1_000, 100_000])
def test_json_nested_too_deep_is_a_4xx_not_a_500(http: TestClient, depth: int) -> None:
    """Python's own parser, which reads what orjson refuses, recursed past its limit on a
    thousand brackets in a field nobody reads."""
    body = b'{"text": "x", "z": ' + b"[" * depth + b"]" * depth + b"}"
    refused = raw(http, "/v1/memories", body)
    assert 400 <= refused.status_code < 500, refused.text  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "billing failed", "text": "all is well"}',
        b'{"text": "billing failed", "metadata": {"k": "1", "k": "2"}}',
    ],
)
def test_a_key_given_twice_is_refused_not_settled_silently(http: TestClient, body: bytes) -> None:
    """Both parsers kept the last of the two, so the note stored was not what the sender
    may have meant; the 422 names the key."""
    refused = raw(http, "/v1/memories", body)
    assert refused.status_code == 422  # type: ignore[attr-defined]
    assert "is given twice in one object" in refused.json()["detail"]  # type: ignore[attr-defined]
    assert http.get("/v1/memories").json()["memories"] == []
    listing = http.get("/v1/memories", params={"filters": '{"agent": "a", "agent": "b"}'})
    assert listing.status_code == 422 and "'agent' is given twice" in listing.json()["detail"]


@pytest.mark.parametrize("job_id", ["p.v", "a:b", "..", "x" * 100])
def test_requeue_of_a_job_id_rq_cannot_name_is_a_4xx_not_a_500(
    http: TestClient, job_id: str
) -> None:
    refused = http.post(f"/v1/jobs/{job_id}/requeue")
    assert 400 <= refused.status_code < 500, refused.text


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"text": "billing\u0000failed"}, "text 'billing\\x00failed' is invalid: holds a NUL"),
        ({"text": "billing", "concepts": ["bill\u0000ing"]}, "holds a NUL"),
        ({"text": "billing failed", "concepts": ["  "]}, "concepts[0] '  ' is invalid: is blank"),
    ],
)
def test_a_nul_character_or_a_blank_concept_is_refused_not_stored(
    http: TestClient, body: dict, said: str
) -> None:
    """A concept of spaces was stored as nothing, and NUL went into the log."""
    refused = http.post("/v1/memories", json=body)
    assert refused.status_code == 422 and said in refused.json()["detail"]
    assert http.get("/v1/memories").json()["memories"] == []


def test_a_peer_that_sends_unknown_keys_is_refused_for_a_while_and_others_are_not(
    settings: Settings,
) -> None:
    few = dataclasses.replace(settings, key_failures=3)
    with TestClient(create_app(few)) as http:
        wrong = {"authorization": "Bearer amk_000000000000_not-a-key"}
        codes = [
            http.post("/v1/read", json={"concepts": ["a"]}, headers=wrong).status_code
            for _ in range(4)
        ]
        assert codes == [401, 401, 401, 429]
        refused = http.post("/v1/read", json={"concepts": ["a"]}, headers=bearer(operator_key(few)))
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert "unknown API keys in a minute" in refused.json()["detail"]
    limits = RateLimits(few, MemoryStorage())
    for _ in range(3):
        limits.count_failed_key("203.0.113.7")
    with pytest.raises(RateLimited):
        limits.refuse_failing_peer("203.0.113.7")
    limits.refuse_failing_peer("198.51.100.2")  # another peer is never slowed


def test_a_whole_number_written_with_a_point_is_the_integer_json_schema_says_it_is(
    http: TestClient,
) -> None:
    assert (
        http.post("/v1/memories", json={"text": "billing runbook", "importance": 5.0}).status_code
        == 202
    )
    refused = http.post("/v1/memories", json={"text": "billing runbook", "importance": 4.5})
    assert refused.status_code == 422 and "importance" in refused.text
