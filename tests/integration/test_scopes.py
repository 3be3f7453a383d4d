"""Whom a request is about (user, session, namespace) comes with it, in headers, and is
recorded on every event it appends; a malformed one is refused before anything is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.engine.events.envelope import decode_event
from assocmem.engine.position import ZERO
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.api_keys import bearer, key_for


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def test_the_scope_headers_are_recorded_on_every_event(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    agent = bearer(key_for(settings, "default", "planner"))
    scoped = {**agent, "x-assocmem-user": "alice@example.com", "x-assocmem-session": "run-7"}
    http.post("/v1/memories", json={"text": "alice's billing note"}, headers=scoped)
    http.post(
        "/v1/activities", json={"text": "deploy"}, headers={**agent, "x-assocmem-namespace": "ops"}
    )
    http.post("/v1/memories", json={"text": "nobody's note"}, headers=agent)
    events = [decode_event(raw, p) for p, raw in runtime.log.entries("default", ZERO)]
    assert [(e.agent, e.user, e.session, e.namespace) for e in events] == [
        ("planner", "alice@example.com", "run-7", None),
        ("planner", None, None, "ops"),
        ("planner", None, None, None),
    ]


def test_a_malformed_scope_is_refused_and_nothing_appended(
    http: TestClient, settings: Settings, runtime: Runtime
) -> None:
    agent = bearer(key_for(settings, "default"))
    bad = http.post(
        "/v1/memories", json={"text": "x"}, headers={**agent, "x-assocmem-user": "a b/c"}
    )
    assert bad.status_code == 422
    assert bad.json()["detail"] == (
        "X-Assocmem-User 'a b/c' is invalid: expected 1 to 128 letters, digits or .:@+-_"
    )
    assert runtime.log.length("default") == 0


def test_a_read_sees_its_user_s_memories_and_the_shared_ones_an_admin_all(
    http: TestClient, settings: Settings
) -> None:
    agent = bearer(key_for(settings, "default", "assistant"))
    admin = bearer(key_for(settings, "default", "boss", ("read", "admin")))
    for user, text in [
        ("alice", "alice billing plan"),
        ("bob", "bob billing plan"),
        (None, "shared billing plan"),
    ]:
        headers = {**agent, "x-assocmem-user": user} if user else agent
        http.post(
            "/v1/memories", json={"text": text, "concepts": ["billing", "plan"]}, headers=headers
        )

    def texts(headers: dict[str, str]) -> set[str]:
        found = http.post("/v1/read", json={"concepts": ["billing"]}, headers=headers).json()
        return {item["text"] for item in found["items"]}

    assert texts({**agent, "x-assocmem-user": "alice"}) == {
        "alice billing plan",
        "shared billing plan",
    }
    assert texts(agent) == {"shared billing plan"}
    assert texts(admin) == {"alice billing plan", "bob billing plan", "shared billing plan"}
    for user in ("alice", "bob"):
        scoped = {**agent, "x-assocmem-user": user}
        http.post("/v1/activities", json={"text": f"{user} deployed"}, headers=scoped)
    listed = http.get("/v1/activities", headers={**agent, "x-assocmem-user": "bob"}).json()
    assert [entry["text"] for entry in listed["items"]] == ["bob deployed"]


def test_one_user_s_links_never_lead_another_user_s_read_chain_or_graph(
    http: TestClient, settings: Settings
) -> None:
    agent = bearer(key_for(settings, "default", "assistant"))
    admin = bearer(key_for(settings, "default", "boss", ("read", "admin")))
    alice, bob = ({**agent, "x-assocmem-user": user} for user in ("alice", "bob"))
    for headers, concepts in [
        (alice, ["card", "diabetes"]),
        (alice, ["card", "diabetes"]),
        (bob, ["card", "travel"]),
        (agent, ["diabetes", "insulin"]),  # about nobody: everyone's
        (agent, ["diabetes", "insulin"]),
    ]:
        note = {"text": " ".join(concepts), "concepts": concepts}
        assert http.post("/v1/memories", json=note, headers=headers).status_code == 202

    def graph(headers: dict[str, str]) -> set[str]:
        found = http.get("/v1/graph", params={"concepts": "card"}, headers=headers).json()
        return {edge["target"] for edge in found["edges"]} | {e["source"] for e in found["edges"]}

    assert graph(alice) == {"card", "diabetes"}
    assert graph(bob) == {"card", "travel"}
    assert graph(admin) == {"card", "diabetes", "travel"}

    def chain(headers: dict[str, str]) -> list[list[str]]:
        body = {"concepts": ["card", "insulin"]}
        return [
            c["path"] for c in http.post("/v1/chain", json=body, headers=headers).json()["chains"]
        ]

    assert chain(alice)[0] == chain(admin)[0] == ["card", "diabetes", "insulin"]
    assert chain(bob) == []

    def read(headers: dict[str, str]) -> set[str]:
        body = {"concepts": ["card"], "record_access": False}
        return {
            item["text"]
            for item in http.post("/v1/read", json=body, headers=headers).json()["items"]
        }

    assert "diabetes insulin" in read(alice)  # by way of alice's card - diabetes link
    assert read(bob) == {"card travel"}


def test_a_memory_s_audit_is_for_the_readers_who_may_see_it(
    http: TestClient, settings: Settings
) -> None:
    agent = bearer(key_for(settings, "default", "assistant"))
    alice, bob = ({**agent, "x-assocmem-user": user} for user in ("alice", "bob"))
    note = {"text": "alice's card was declined", "concepts": ["card"]}
    written = http.post("/v1/memories", json=note, headers=alice).json()["id"]
    assert http.get(f"/v1/audit/memory/{written}", headers=alice).status_code == 200
    refused = http.get(f"/v1/audit/memory/{written}", headers=bob)
    assert refused.status_code == 404 and "unknown" in refused.json()["detail"]
