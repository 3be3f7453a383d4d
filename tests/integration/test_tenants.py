"""One process serves several tenants: the tenant comes from the caller's key, and
each tenant's state is folded from its own log only, however the appends interleave."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.api.http.app import create_app
from assocmem.engine.principal import Principal
from assocmem.engine.snapshot.codec import content_hash
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import Note, Rating, ReadRequest
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.rebuild import Rebuild, rebuild
from tests.api_keys import bearer, key_for
from tests.stores import Clock


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as client:
        yield client


def test_one_app_serves_two_tenants_apart(
    http: TestClient, runtime: Runtime, settings: Settings
) -> None:
    acme = bearer(key_for(settings, "acme"))
    globex = bearer(key_for(settings, "globex"))
    note = {"text": "the billing job timed out", "concepts": ["billing", "timeout"]}
    mine = http.post("/v1/memories", json=note, headers=acme).json()["id"]
    http.post("/v1/memories", json={"text": "lunch menu", "concepts": ["lunch"]}, headers=globex)
    assert [
        i["id"]
        for i in http.post("/v1/read", json={"concepts": ["billing"]}, headers=acme).json()["items"]
    ] == [mine]
    assert (
        http.post("/v1/read", json={"concepts": ["billing"]}, headers=globex).json()["items"] == []
    )
    other = http.post(
        "/v1/feedback", json={"ids": [mine], "outcome": 1, "concepts": ["x"]}, headers=globex
    )
    assert other.status_code == 404  # acme's memory is no id of globex's
    assert http.get("/v1/health", headers=globex).json()["tenant"] == "globex"
    assert http.get("/v1/state", headers=acme).json()["memories"] == 1
    assert runtime.log.tenants() == ["acme", "globex"]
    assert runtime.log.length("acme") == 1 and runtime.log.length("globex") == 1


STEPS = st.lists(
    st.tuples(st.sampled_from(["x", "y"]), st.sampled_from(["write", "rate", "read"])),
    min_size=1,
    max_size=30,
)


@given(STEPS, st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=3, unique=True))
@settings(max_examples=25, deadline=None)
def test_interleaved_tenants_are_each_served_their_own_replay(steps, concepts) -> None:
    """Writes, ratings and reads of two tenants in any interleaving, through the application:
    each tenant's served state is the fold from zero of its own log."""
    clock = Clock()
    app = Application(Runtime.in_memory(Settings(), clock), clock)
    written: dict[str, list[str]] = {"x": [], "y": []}
    for n, (tenant, action) in enumerate(steps):
        clock.advance(0.001)
        who = Principal(tenant, "agent")
        if action == "write" or not written[tenant]:
            found = app.write(who, [Note(f"note {n}", concepts=concepts[: 2 + n % 2])])
            written[tenant].append(str(found[0].position))
        elif action == "rate":
            app.give_feedback(who, Rating([written[tenant][-1]], 1.0, concepts=[f"q{n % 3}"]))
        else:
            app.read(who, ReadRequest(concepts=[concepts[0]], record_access=False))
    for tenant in ("x", "y"):
        with app.live(tenant).served() as served:
            replay = rebuild(
                app.runtime.log,
                app.runtime.snapshots,
                tenant,
                Rebuild(from_zero=True),
            )
            assert content_hash(served) == content_hash(replay)
            assert len(served.memories) == len(written[tenant])


def test_no_route_shows_one_tenant_what_another_wrote(http: TestClient, settings: Settings) -> None:
    """Globex asks about acme's concepts through every read route: nothing of acme's notes
    (a word only their text and concepts carry, or their ids) comes back."""
    acme = bearer(key_for(settings, "acme", "boss", ("read", "write", "feedback", "admin")))
    globex = bearer(key_for(settings, "globex", "boss", ("read", "write", "feedback", "admin")))
    note = {"text": "zebracorn billing outage", "concepts": ["zebracorn", "billing", "outage"]}
    written = http.post("/v1/memories", json=note, headers=acme).json()
    http.post("/v1/activities", json={"text": "zebracorn outage deploy"}, headers=acme)
    lunch = {"text": "lunch", "concepts": ["lunch", "billing"]}
    http.post("/v1/memories", json=lunch, headers=globex)
    now = datetime.now(UTC).isoformat()
    calls = [
        ("POST", "/v1/read", {"json": {"concepts": ["zebracorn", "billing"], "depth": "deep"}}),
        ("POST", "/v1/read", {"json": {"concepts": ["billing"], "as_of": now}}),
        ("POST", "/v1/chain", {"json": {"concepts": ["zebracorn", "billing"]}}),
        ("GET", "/v1/graph", {"params": {"concepts": ["zebracorn", "billing"], "hops": 2}}),
        ("GET", "/v1/audit/link", {"params": {"source": "billing", "target": "lunch"}}),
        ("GET", "/v1/activities", {"params": {"keyword": "zebracorn"}}),
        ("GET", "/v1/activities/summary", {}),
        ("GET", "/v1/dead-letters", {}),
        ("GET", "/v1/jobs", {}),
        ("GET", "/v1/state", {}),
    ]
    for method, path, kwargs in calls:
        seen = http.request(method, path, headers=globex, **kwargs)
        assert seen.status_code == 200, (path, seen.text)
        assert "outage" not in seen.text and written["id"] not in seen.text, (path, seen.text)
    assert http.get(f"/v1/audit/memory/{written['id']}", headers=globex).status_code == 404
    audit = http.get(
        "/v1/audit/link", params={"source": "zebracorn", "target": "billing"}, headers=globex
    )  # a word only acme wrote is one globex's log never named
    assert audit.status_code == 404 and "'zebracorn' is unknown" in audit.text
    assert "outage" not in audit.text and "nearest" not in audit.text
    own = http.get("/v1/graph", params={"concepts": ["zebracorn"]}, headers=acme)
    assert "outage" in own.text  # the sweep above would have seen it
