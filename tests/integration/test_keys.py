"""API keys at the HTTP edge: no key, no answer; a key's tenant, agent and permissions are
the request's, whatever the body says; a revoked key is refused by every replica."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assocmem.api.client.local import read_key_file
from assocmem.api.http.app import create_app
from assocmem.api.ops.operator_key import ensure_operator_key
from assocmem.api.ops.run_file import write_key_file
from assocmem.workers.app.key_commands import AUTH_CACHE_SECONDS, KeyCommands
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.live import LiveState
from tests.api_keys import bearer, key_for, operator_key

NOTE = {"text": "the billing job timed out", "concepts": ["billing", "timeout"]}


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize("headers", [{}, bearer("amk_0_nonsense"), {"x-api-key": "wrong"}])
def test_a_request_without_a_known_key_is_refused_and_told_how(
    http: TestClient, headers: dict[str, str]
) -> None:
    answer = http.post("/v1/read", json={"concepts": ["billing"]}, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert "API key" in answer.json()["detail"]


def test_probes_answer_without_a_key(http: TestClient) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    deadline = time.monotonic() + 10
    while http.get("/readyz").status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.05)  # the default tenant's state loads in the background
    assert http.get("/readyz").json() == {"status": "ready"}
    # The README says the API document and its page need no key either, and nothing else
    assert http.get("/openapi.json").status_code == 200 and http.get("/docs").status_code == 200
    assert http.get("/v1/memories").status_code == 401


def test_a_replica_still_loading_its_state_is_not_ready(
    http: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LiveState, "caught_up", property(lambda self: False))
    answer = http.get("/readyz")
    assert answer.status_code == 503 and answer.json() == {"status": "loading"}
    assert answer.headers["retry-after"] == "1"
    assert http.get("/healthz").status_code == 200


def test_the_agent_of_an_event_is_the_key_s_and_the_header_forms_agree(
    http: TestClient, settings: Settings
) -> None:
    secret = key_for(settings, "default", agent="planner")
    written = http.post("/v1/memories", json=NOTE, headers={"x-api-key": secret}).json()
    events = http.get(f"/v1/audit/memory/{written['id']}", headers=bearer(secret)).json()
    assert [e["agent"] for e in events["events"]] == ["planner"]


def test_a_body_cannot_name_another_tenant_or_agent(http: TestClient, settings: Settings) -> None:
    acme = bearer(key_for(settings, "acme"))
    for field in ({"tenant": "globex"}, {"agent": "operator"}):
        answer = http.post("/v1/memories", json={**NOTE, **field}, headers=acme)
        assert answer.status_code == 422 and next(iter(field)) in answer.json()["detail"]


def test_each_permission_opens_its_own_routes_only(http: TestClient, settings: Settings) -> None:
    reader = bearer(key_for(settings, "default", permissions=("read",)))
    writer = bearer(key_for(settings, "default", permissions=("write",)))
    written = http.post("/v1/memories", json=NOTE, headers=writer)
    assert written.status_code == 202
    assert http.post("/v1/memories", json=NOTE, headers=reader).status_code == 403
    assert http.post("/v1/read", json={"concepts": ["billing"]}, headers=reader).status_code == 200
    assert http.post("/v1/read", json={"concepts": ["billing"]}, headers=writer).status_code == 403
    rating = {"ids": [written.json()["id"]], "outcome": 1, "concepts": ["x"]}
    refused = http.post("/v1/feedback", json=rating, headers=writer)
    assert refused.status_code == 403 and "'feedback' permission" in refused.json()["detail"]
    for method, path in [("GET", "/v1/jobs"), ("GET", "/v1/keys"), ("POST", "/v1/archive")]:
        assert http.request(method, path, headers=reader).status_code == 403


def test_an_admin_manages_its_own_tenant_s_keys_and_an_operator_every_tenant_s(
    http: TestClient, settings: Settings
) -> None:
    admin = bearer(key_for(settings, "acme", "boss", ("read", "admin")))
    made = http.post("/v1/keys", json={"agent": "planner"}, headers=admin)
    assert made.status_code == 201
    assert made.json()["tenant"] == "acme"
    assert made.json()["permissions"] == ["read", "write", "feedback"]
    refused = http.post("/v1/keys", json={"agent": "spy", "tenant": "globex"}, headers=admin)
    assert refused.status_code == 403
    assert (
        http.post("/v1/keys", json={"agent": "x", "operator": True}, headers=admin).status_code
        == 403
    )
    operator = bearer(operator_key(settings))
    other = http.post("/v1/keys", json={"agent": "a", "tenant": "globex"}, headers=operator)
    assert other.status_code == 201
    listed = http.get("/v1/keys", headers=admin).json()["keys"]
    assert {k["tenant"] for k in listed} == {"acme"} and all("key" not in k for k in listed)
    assert {k["tenant"] for k in http.get("/v1/keys", headers=operator).json()["keys"]} == {
        "acme",
        "globex",
        "default",
    }
    assert http.delete(f"/v1/keys/{other.json()['id']}", headers=admin).status_code == 422
    bad = http.post("/v1/keys", json={"agent": "x", "permissions": ["root"]}, headers=admin)
    assert bad.status_code == 422 and "root" in bad.json()["detail"]


def test_an_admin_erases_its_own_tenant_only_and_names_keys_as_the_document_says(
    http: TestClient, settings: Settings
) -> None:
    admin = bearer(key_for(settings, "acme", "boss", ("read", "admin")))
    refused = http.post("/v1/forget", json={"tenant": "globex"}, headers=admin)
    assert refused.status_code == 403 and "its own tenant ('acme')" in refused.json()["detail"]
    assert http.get("/v1/jobs", headers=admin).json()["jobs"] == []
    # what the service would refuse, the OpenAPI document refuses too (a client's check of
    # a body against the document is the service's)
    for bad in ({"tenant": ""}, {"tenant": "a b"}, {"user": ""}, {"session": "a/b"}):
        answer = http.post("/v1/keys", json={"agent": "x", **bad}, headers=admin)
        [(field, value)] = bad.items()
        assert answer.status_code == 422
        assert answer.json()["detail"].startswith(f"{field} '{value}' is invalid: expected 1 to")


def test_the_last_operator_key_cannot_be_revoked_but_one_of_two_can(
    http: TestClient, settings: Settings
) -> None:
    first = operator_key(settings)
    key_id = {k["id"] for k in http.get("/v1/keys", headers=bearer(first)).json()["keys"]}
    refused = http.delete(f"/v1/keys/{key_id.pop()}", headers=bearer(first))
    assert refused.status_code == 409 and "last operator key" in refused.json()["detail"]
    assert http.get("/v1/state", headers=bearer(first)).status_code == 200  # still let in
    second = http.post(
        "/v1/keys",
        json={"agent": "ops", "operator": True, "permissions": ["admin"]},
        headers=bearer(first),
    ).json()
    own = [
        k["id"]
        for k in http.get("/v1/keys", headers=bearer(first)).json()["keys"]
        if k["id"] != second["id"]
    ]
    assert http.delete(f"/v1/keys/{own[0]}", headers=bearer(second["key"])).status_code == 200
    last = http.delete(f"/v1/keys/{second['id']}", headers=bearer(second["key"]))
    assert last.status_code == 409


def test_a_revoked_key_is_refused_by_another_replica_within_its_cache_time(
    http: TestClient, settings: Settings
) -> None:
    secret = key_for(settings, "default", agent="leaving")
    operator = bearer(operator_key(settings))
    with TestClient(create_app(settings)) as replica:
        assert (
            replica.post("/v1/read", json={"concepts": ["x"]}, headers=bearer(secret)).status_code
            == 200
        )
        [key] = [
            k
            for k in http.get("/v1/keys", headers=operator).json()["keys"]
            if k["agent"] == "leaving"
        ]
        assert http.delete(f"/v1/keys/{key['id']}", headers=operator).status_code == 200
        assert (
            http.post("/v1/read", json={"concepts": ["x"]}, headers=bearer(secret)).status_code
            == 401
        )
        time.sleep(AUTH_CACHE_SECONDS + 0.1)
        assert (
            replica.post("/v1/read", json={"concepts": ["x"]}, headers=bearer(secret)).status_code
            == 401
        )


def test_jobs_of_another_tenant_are_neither_listed_nor_shown(
    http: TestClient, settings: Settings
) -> None:
    acme = bearer(key_for(settings, "acme", "boss", ("read", "write", "admin")))
    globex = bearer(key_for(settings, "globex", "boss", ("read", "write", "admin")))
    job = http.post("/v1/archive", headers=acme).json()
    assert [j["id"] for j in http.get("/v1/jobs", headers=acme).json()["jobs"]] == [job["id"]]
    assert http.get("/v1/jobs", headers=globex).json()["jobs"] == []
    assert http.get(f"/v1/jobs/{job['id']}", headers=globex).status_code == 404


def test_up_keeps_an_operator_key_redis_knows_and_replaces_one_it_does_not(
    settings: Settings, runtime: Runtime, tmp_path: Path
) -> None:
    home = tmp_path  # a data directory, made by `up`
    assert ensure_operator_key(settings, home)  # the first start makes one
    made = read_key_file(home)
    assert made is not None
    assert KeyCommands(runtime).authenticate(made) is not None
    assert not ensure_operator_key(settings, home)  # a restart keeps it
    assert read_key_file(home) == made
    write_key_file(home, "amk_from_another_pipeline")
    assert ensure_operator_key(settings, home)  # unknown to this Redis: replaced
    again = read_key_file(home)
    assert again not in (None, made, "amk_from_another_pipeline")
    assert KeyCommands(runtime).authenticate(again) is not None
