"""The Python client against the real API on a real socket (uvicorn in a thread) and real Redis."""

from __future__ import annotations

import dataclasses
import http.server
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import urllib3

from assocmem.api.cli import render
from assocmem.api.client import Client
from assocmem.api.client import sync as client_module
from assocmem.api.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    ServiceDown,
    Unauthorized,
)
from assocmem.workers.runtime.redis_server import free_port
from assocmem.workers.runtime.settings import DEFAULT_PORT, Settings
from tests.api_keys import key_for, operator_key
from tests.live_api import serving, slow_rebuilds


@pytest.fixture
def client(settings: Settings) -> Iterator[Client]:
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as api:
        yield api


def test_list_and_boolean_query_parameters_reach_the_api(client: Client) -> None:
    client.write("pool sizing", concepts=["queue", "pool"])
    client.write("stream trimming", concepts=["queue", "stream"])
    client.feedback([client.read(concepts=["queue"])["items"][0]["id"]], 1.0, concepts=["queue"])
    edges = {
        frozenset((e["source"], e["target"])) for e in client.graph(["pool", "stream"])["edges"]
    }
    assert edges == {frozenset(("pool", "queue")), frozenset(("queue", "stream"))}
    assert client.state()["taught_links"] > 0
    assert client.state(without_feedback=True)["taught_links"] == 0


def test_a_refused_request_raises_bad_request_with_the_apis_reason(client: Client) -> None:
    with pytest.raises(BadRequest) as refused:
        client.write("x", importance=9)
    assert refused.value.status == 422
    assert "importance" in str(refused.value)


def test_reads_wait_for_the_clients_own_writes_and_refuse_a_bad_after(client: Client) -> None:
    first = client.write("pool sizing", concepts=["queue", "pool"])
    batch = client.write_many([{"text": "stream trimming", "concepts": ["queue", "stream"]}])
    assert client.position == batch[0]["position"] != first["position"]
    assert client.read(concepts=["queue"])["position"] == client.position
    with pytest.raises(BadRequest, match="not a stream position"):
        client.read(concepts=["queue"], after="yesterday")
    ms = int(client.position.split("-")[0])
    with pytest.raises(BadRequest, match="past the end of the log"):
        client.find_chain(["pool", "stream"], after=f"{ms + 1}-0")


def test_nothing_listening_is_reported_as_unreachable() -> None:
    port = free_port()
    with Client(f"http://127.0.0.1:{port}") as api, pytest.raises(ServiceDown) as down:
        api.health()
    assert f"not reachable at http://127.0.0.1:{port}" in str(down.value)


def test_a_server_that_never_answers_is_reported_with_the_timeout() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        with Client(f"http://127.0.0.1:{port}", timeout=0.3) as api:
            with pytest.raises(ServiceDown, match=r"did not answer within 0\.3 s"):
                api.read(concepts=["anything"])


def test_a_degraded_read_answers_empty_within_its_bound_when_nothing_answers() -> None:
    """An agent's memory outage must not fail its run: silent server, closed port, and a
    chain too; the bound is the client's, whatever the service does."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        for port in (silent.getsockname()[1], free_port()):
            with Client(f"http://127.0.0.1:{port}", degrade_after=0.5) as api:
                start = time.monotonic()
                read = api.read(concepts=["anything"])
                chain = api.find_chain(["a", "b"])
                assert time.monotonic() - start < 2 * 0.5 + 1.0  # two calls, each bounded
                assert read["items"] == [] and read["degraded"] is True and read["reason"]
                assert chain["chains"] == [] and chain["degraded"] is True


def test_a_degraded_client_still_says_when_the_request_itself_is_wrong(client: Client) -> None:
    degraded = Client(client.url, degrade_after=2.0, api_key=client.api_key)
    with degraded, pytest.raises(BadRequest, match="depth"):
        degraded.read(concepts=["queue"], depth="deepest")
    with Client(client.url, degrade_after=2.0, api_key=client.api_key) as healthy:
        assert healthy.read(concepts=["queue"])["degraded"] is False


def test_a_url_that_is_not_http_is_refused_at_once_naming_the_default_port() -> None:
    with pytest.raises(ValueError, match="not an http.*127.0.0.1:8765") as refused:
        Client("127.0.0.1:8750")
    assert DEFAULT_PORT == 8765 and "8750" not in str(refused.value).split("such as")[1]


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    peers: set[tuple[str, int]] = set()

    def do_GET(self) -> None:
        self.peers.add(self.client_address)
        body = b'{"status": "ok"}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_an_idle_connection_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server closes idle connections; a request sent on one as it closes gets no answer."""
    monkeypatch.setattr(client_module, "IDLE_REUSE", 0.2)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{server.server_port}") as api:
            api.health()
            api.health()
            assert len(_CountingHandler.peers) == 1, "back-to-back requests share a connection"
            time.sleep(0.3)
            api.health()
            assert len(_CountingHandler.peers) == 2
    finally:
        server.shutdown()
        server.server_close()


class _FlakyHandler(http.server.BaseHTTPRequestHandler):
    """Answers 503 to the first append, then 202; keeps every body it was sent."""

    protocol_version = "HTTP/1.1"
    bodies: list[bytes] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers["content-length"])))
        status, body = (503, b'{"detail": "away"}') if len(self.bodies) == 1 else (202, b"{}")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_an_append_is_sent_again_with_the_same_idempotency_key() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FlakyHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Client(f"http://127.0.0.1:{server.server_port}") as api:
            api.write("a note without a key of its own")
        first, again = (orjson.loads(b) for b in _FlakyHandler.bodies)
        assert first == again and len(first["key"]) == 32
    finally:
        server.shutdown()
        server.server_close()


def test_a_read_of_a_past_state_is_asked_again_while_the_service_rebuilds_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild longer than ASSOCMEM_READ_TIMEOUT answers 503 `read_timeout` and goes on;
    the client asks again (after Retry-After) until the rebuilt state answers."""
    slow_rebuilds(monkeypatch)
    hurried = dataclasses.replace(settings, read_timeout=0.1)
    with serving(hurried) as url, Client(url, api_key=operator_key(settings)) as api:
        waits: list[ApiError] = []
        api.on_wait = waits.append
        positions = [
            api.write_many(
                [
                    {"text": f"note {n} on queues", "concepts": ["queue", f"n{n}"]}
                    for n in range(start, start + 1000)
                ]
            )[-1]["position"]
            for start in range(0, 6000, 1000)
        ]
        # A rebuild longer than 0.1 s: refused
        refused = urllib3.request(
            "POST",
            f"{url}/v1/read",
            body=orjson.dumps({"concepts": ["queue"], "as_of": positions[-2]}),
            headers={
                "authorization": f"Bearer {operator_key(settings)}",
                "content-type": "application/json",
            },
        )
        assert refused.status == 503
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["code"] == "read_timeout"
        assert refused.json()["detail"].startswith(
            f"the state as of {positions[-2]} is being rebuilt from zero: 0% of the way there;"
        )
        # ... so the client's read of another past state was refused too, and asked again
        answer = api.read(concepts=["queue"], as_of=positions[-3], limit=3)
        assert answer["position"] == positions[-3]
        assert waits and all(w.code == "read_timeout" for w in waits)  # told each time
        waits.clear()
        assert api.state(as_of=positions[-4])["position"] == positions[-4]  # the same for it
        assert waits and "is being rebuilt from zero" in str(waits[0])
        assert len(answer["items"]) == 3


def test_a_memory_is_fetched_by_id_with_its_words_and_scope(settings: Settings) -> None:
    key = operator_key(settings)
    with serving(settings) as url:
        with Client(url, api_key=key, scope={"user": "alice"}) as alice:
            written = alice.write("Timed out twice on the billing job", importance=4)
            found = alice.get_memory(written["id"])
            assert found["id"] == written["id"] and found["user"] == "alice"
            assert found["text"] == "Timed out twice on the billing job"
            assert found["importance"] == 4 and found["accesses"] == 0
            assert found["concept_keys"] == written["concept_keys"]
            assert found["position"] >= written["position"]
        with Client(url, api_key=key, scope={"user": "bob"}) as bob:
            with pytest.raises(BadRequest, match="unknown") as refused:
                bob.get_memory(written["id"])  # another user's memory is not bob's to see
            assert refused.value.status == 404
            with pytest.raises(BadRequest) as unknown:
                bob.get_memory("1-0")
            assert unknown.value.status == 404


def test_memories_are_listed_newest_first_a_page_at_a_time_within_the_keys_scope(
    settings: Settings,
) -> None:
    key = operator_key(settings)
    with serving(settings) as url:
        with Client(url, api_key=key, scope={"user": "alice"}) as alice:
            private = alice.write("alice keeps her deploy notes here")["id"]
        with Client(url, api_key=key) as api:
            ids = [api.write(f"step {n} of the billing migration")["id"] for n in range(5)]
            api.log_activity("rolled the billing job back", category="deploy")
            old = api.write("the cache is warm", supersedes=None)["id"]
            api.write("the cache is cold again", supersedes=[old])

            first = api.list_memories(kind="memory", limit=3)
            assert [m["text"] for m in first["memories"]] == [
                "the cache is cold again",
                "step 4 of the billing migration",
                "step 3 of the billing migration",
            ]  # the superseded version is left out, the activity is of another kind
            second = api.list_memories(kind="memory", limit=3, cursor=first["cursor"])
            assert [m["id"] for m in second["memories"]] == ids[2::-1]
            last = api.list_memories(kind="memory", limit=3, cursor=second["cursor"])
            assert [m["id"] for m in last["memories"]] == [private]  # an operator sees all
            assert last["cursor"] is None

            everything = api.list_memories(superseded=True, limit=100)["memories"]
            assert old in {m["id"] for m in everything}
            assert [m["kind"] for m in api.list_memories(kind="activity")["memories"]] == [
                "activity"
            ]
            assert api.list_memories(agent="someone else")["memories"] == []
            with pytest.raises(BadRequest, match="cursor"):
                api.list_memories(cursor="1-0")
        reader = key_for(settings, settings.tenant, "reader", ("read",))
        with Client(url, api_key=reader) as common:
            assert private not in {m["id"] for m in common.list_memories(limit=100)["memories"]}
        with Client(url, api_key=reader, scope={"user": "alice"}) as alice:
            listed = alice.list_memories(user="alice")["memories"]
            assert [m["id"] for m in listed] == [private] and listed[0]["user"] == "alice"


def test_a_memory_is_updated_by_a_new_version_that_supersedes_it(settings: Settings) -> None:
    key = operator_key(settings)
    with serving(settings) as url:
        with Client(url, api_key=key) as api:
            old = api.write("the cache is warmed at nine", importance=2)["id"]
            new = api.update_memory(old, "the cache is warmed at six", importance=4)["id"]
            assert new != old
            found = api.get_memory(new)
            assert found["text"] == "the cache is warmed at six" and found["importance"] == 4
            assert api.get_memory(old)["superseded_by"] == new
            items = api.read("when is the cache warmed")["items"]
            assert [i["id"] for i in items] == [new]  # the old version is no longer read
            with pytest.raises(Conflict, match=f"superseded by {new}"):
                api.update_memory(old, "the cache is warmed at seven")
            with pytest.raises(NotFound):
                api.update_memory("1-0", "no such memory")
        reader = key_for(settings, settings.tenant, "reader", ("read",))
        with Client(url, api_key=reader) as read_only, pytest.raises(Forbidden):
            read_only.update_memory(new, "a reader may not change it")


def test_metadata_is_kept_with_a_memory_and_filters_a_listing(settings: Settings) -> None:
    key = operator_key(settings)
    with serving(settings) as url:
        with Client(url, api_key=key) as api:
            tagged = {"team": "billing", "ticket": 4521, "resolved": False, "share": 0.5}
            first = api.write("the invoice job timed out", metadata=tagged)["id"]
            api.write("the invoice job ran", metadata={"team": "billing", "ticket": 4522})
            api.write("the search index was rebuilt", metadata={"team": "search"})
            assert api.get_memory(first)["metadata"] == tagged
            listed = api.list_memories(metadata={"team": "billing"})["memories"]
            assert [m["text"] for m in listed] == [
                "the invoice job ran",
                "the invoice job timed out",
            ]
            exact = api.list_memories(
                metadata={"team": "billing", "ticket": 4521, "resolved": False}
            )
            assert [m["id"] for m in exact["memories"]] == [first]
            item = api.read("why did the invoice job time out")["items"][0]
            assert item["id"] == first and item["metadata"] == tagged
            newer = api.update_memory(
                first, "the invoice job timed out twice", metadata={"team": "ops"}
            )
            assert api.get_memory(newer["id"])["metadata"] == {"team": "ops"}
            for wrong in ({"a": {"nested": 1}}, {"a": [1, 2]}, {f"k{n}": n for n in range(33)}):
                with pytest.raises(BadRequest, match="metadata"):
                    api.write("refused for its metadata", metadata=wrong)
            assert "metadata" not in api.get_memory(api.write("no metadata")["id"])


def test_a_link_documents_wrote_says_so_rather_than_a_position_of_zero(
    settings: Settings,
) -> None:
    """No memory carries both concepts, so the state has no position for the link: the graph
    said it changed at 0-0."""
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as api:
        api.ingest(
            "runbook", "Drain the queue before the pool restarts. The pool restarts nightly."
        )
        api.write("the queue drains slowly")  # a memory of one of the two concepts only
        edges = api.graph(["pool"])["edges"]
        assert edges and all(e["changed_at"] is None for e in edges)
        shown = render.edges(api.graph(["pool"]))
        assert "changed at 0-0" not in shown and "from documents: assocmem audit link" in shown


def test_each_refusal_is_its_own_error_with_the_services_detail(settings: Settings) -> None:
    key = operator_key(settings)
    reader = key_for(settings, settings.tenant, "reader", ("read",))
    with serving(settings) as url:
        with Client(url, api_key="not-a-key") as stranger, pytest.raises(Unauthorized):
            stranger.state()
        with Client(url, api_key=reader) as read_only, pytest.raises(Forbidden) as refused:
            read_only.write("the deploy failed")
        assert refused.value.status == 403 and "write" in str(refused.value)
        with Client(url, api_key=key) as api:
            api.write("the deploy failed", key="k1")
            with pytest.raises(Conflict, match="k1"):
                api.write("the deploy failed twice", key="k1")
            with pytest.raises(NotFound):
                api.get_memory("1-0")
            with pytest.raises(NotFound):
                api.job("no-such-job")


def test_a_client_told_nothing_finds_the_local_up_and_keeps_its_key_at_home(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = operator_key(settings)
    home = tmp_path / "home"
    home.mkdir()
    (home / "api-key").write_text(key + "\n")
    monkeypatch.setenv("ASSOCMEM_HOME", str(home))
    monkeypatch.delenv("ASSOCMEM_URL", raising=False)
    monkeypatch.delenv("ASSOCMEM_API_KEY", raising=False)
    with serving(settings) as url:
        (home / "run.json").write_text(orjson.dumps({"url": url}).decode())
        with Client() as found:
            assert found.url == url.rstrip("/") and found.state()["position"]
        monkeypatch.setenv("ASSOCMEM_URL", url)  # a URL named: the operator key is not sent
        with Client() as named, pytest.raises(Unauthorized):
            named.state()
        monkeypatch.setenv("ASSOCMEM_API_KEY", key)
        with Client() as keyed_too:
            assert keyed_too.state()["position"]


def test_a_deleted_memory_is_gone_from_reads_listings_and_gets(settings: Settings) -> None:
    key = operator_key(settings)
    with serving(settings) as url:
        with Client(url, api_key=key) as api:
            kept = api.write("the billing job retries with backoff", concepts=["billing", "retry"])
            gone = api.write("the billing job retries at once", concepts=["billing", "retry"])
            deleted = api.delete_memory(gone["id"])
            assert deleted["id"] == gone["id"] and deleted["erasure"] is None
            assert deleted["position"] > gone["position"]
            # the client's next read waits for the deletion, as for any of its writes
            assert [i["id"] for i in api.read(concepts=["billing"])["items"]] == [kept["id"]]
            assert [i["id"] for i in api.read(concepts=["billing"], history=True)["items"]] == [
                kept["id"]
            ]
            listed = api.list_memories(superseded=True)["memories"]
            assert gone["id"] not in {m["id"] for m in listed}
            with pytest.raises(NotFound, match="deleted"):
                api.get_memory(gone["id"])
            graph = api.graph(["billing"])  # billing-retry was written twice, now once
            (edge,) = [
                e for e in graph["edges"] if {e["source"], e["target"]} == {"billing", "retry"}
            ]
            assert edge["count"] == 1
            again = api.delete_memory(gone["id"])  # a retry changes nothing
            assert again["position"] is None
            with pytest.raises(NotFound):
                api.delete_memory("1-0")
            audit = api.audit_memory(gone["id"])["events"]
            assert [e["type"] for e in audit] == ["memory.written", "memory.deleted"]
        writer = key_for(settings, settings.tenant, "writer", ("read", "write"))
        with Client(url, api_key=writer) as api, pytest.raises(Forbidden, match="admin"):
            api.delete_memory(kept["id"], erase=True)  # erasing is an admin's
        reader = key_for(settings, settings.tenant, "reader", ("read",))
        with Client(url, api_key=reader) as read_only, pytest.raises(Forbidden):
            read_only.delete_memory(kept["id"])


def test_reads_and_listings_take_filters_on_metadata_and_fields(settings: Settings) -> None:
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as api:
        low = api.write("billing timeout on the nightly job", metadata={"priority": 1})
        high = api.write("billing timeout on the invoice job", metadata={"priority": 4})
        api.write("billing timeout, no priority given")
        found = api.read("billing timeout", filters={"priority": {"gte": 2}})
        assert [i["id"] for i in found["items"]] == [high["id"]]
        either = api.read("billing timeout", filters={"OR": [{"priority": 1}, {"priority": 4}]})
        assert {i["id"] for i in either["items"]} == {low["id"], high["id"]}
        listed = api.list_memories(filters={"priority": {"lt": 2}})["memories"]
        assert [m["id"] for m in listed] == [low["id"]]
        with pytest.raises(BadRequest, match="filters.priority has operator 'like'"):
            api.read("billing", filters={"priority": {"like": 4}})
        with pytest.raises(BadRequest, match="filters.OR"):
            api.list_memories(filters={"OR": "priority"})


def test_a_memory_written_with_an_expiry_is_read_until_then_and_no_longer(
    settings: Settings,
) -> None:
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as api:
        soon = api.write("the door code is 4471", expires_at=time.time() + 1.0)
        assert api.get_memory(soon["id"])["expires_at"] > time.time()
        assert [i["id"] for i in api.read("door code")["items"]] == [soon["id"]]
        time.sleep(1.1)
        assert api.read("door code")["items"] == []
        with pytest.raises(NotFound, match="expired"):
            api.get_memory(soon["id"])
        with pytest.raises(BadRequest, match="expires_at .* is not in the future"):
            api.write("already gone", expires_at=time.time() - 10)


def test_a_note_with_no_content_words_is_refused_as_unfindable(settings: Settings) -> None:
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as api:
        with pytest.raises(BadRequest, match="text 'the' has no content words"):
            api.write("the")
        with pytest.raises(BadRequest, match=r"items\[1\]\.text 'of it' has no content words"):
            api.write_many([{"text": "billing timeout"}, {"text": "of it"}])
        assert api.write("the", concepts=["billing"])["concepts"] == ["billing"]


def test_a_key_pinned_to_a_user_acts_as_that_user_whatever_its_headers_say(
    settings: Settings,
) -> None:
    with serving(settings) as url, Client(url, api_key=operator_key(settings)) as admin:
        made = admin.create_key("alices-agent", permissions=["read", "write"], user="alice")
        assert made["user"] == "alice"
        assert [k.get("user") for k in admin.keys()["keys"] if k["id"] == made["id"]] == ["alice"]
        admin.write("the shared billing runbook")
        with Client(url, api_key=admin.api_key, scope={"user": "bob"}) as as_bob:
            as_bob.write("bob's billing password hint")
        with Client(url, api_key=made["key"]) as alice:
            mine = alice.write("alice's billing notes")
            assert alice.get_memory(mine["id"])["user"] == "alice"  # no header: the pin
            seen = {i["text"] for i in alice.read("billing")["items"]}
            assert seen == {"the shared billing runbook", "alice's billing notes"}
        with Client(url, api_key=made["key"], scope={"user": "bob"}) as widening:
            with pytest.raises(Forbidden, match="pinned to user 'alice'"):
                widening.read("billing")
        with Client(url, api_key=made["key"], scope={"session": "s1"}) as narrowed:
            kept = narrowed.write("alice's billing notes of session one")
            found = narrowed.get_memory(kept["id"])
            assert (found["user"], found["session"]) == ("alice", "s1")
        with pytest.raises(BadRequest, match="cannot be admin or operator"):
            admin.create_key("root-of-alice", permissions=["read", "admin"], user="alice")
