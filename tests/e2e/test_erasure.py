"""`assocmem forget --user` with real processes: after it, no Redis key (values decoded,
compressed blobs inflated) and no file of the data directory holds the user's text or
concepts, whether their events were in the stream or in an archive segment; the other user's
part of the state is exactly what it was, and the served state is the fold of what is left."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import redis
import zstandard

from assocmem.api.ops.supervisor import SNAPSHOT_CACHE, SNAPSHOT_RUNGS
from assocmem.engine.events.envelope import Event, decode_event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.position import ZERO
from assocmem.engine.snapshot.codec import content_hash, decompress_snapshot
from assocmem.workers.store.ports import iter_entries
from assocmem.workers.store.redis.connect import data_client
from assocmem.workers.store.rung_rows import SharedRows, Span, read_apart
from tests.e2e.pipeline import Pipeline, cli, cli_json

ALICE = "alice@example.com"
MARKS = [b"zqxalicetext", b"zqxaliceconcept"]
"""Alice's words: in her notes' text, and one of their concepts."""


def as_user(user: str, *args: str, url: str) -> dict:
    return cli_json(*args, "--user", user, url=url)


def events_of(up: Pipeline) -> list[Event]:
    runtime = up.runtime()
    try:
        return [
            decode_event(raw, position)
            for chunk in iter_entries(runtime.log, "default", ZERO)
            for position, raw in chunk
        ]
    finally:
        runtime.close()


def hash_of_user(events: list[Event], user: str) -> str:
    return content_hash(fold_from_zero(e for e in events if e.user == user))


def redis_contents(up: Pipeline) -> bytes:
    """Every value of every key, as the application reads it: streams' fields, hashes, lists,
    sets, and strings inflated when they are zlib blobs (snapshots, archive segments); in the
    data's Redis (every node of a cluster) and the queues'."""
    info = up.info
    if info.queue_url:  # up --cluster
        stores = [data_client(info.redis_url), redis.Redis.from_url(info.queue_url)]
    else:  # the data in database 0, the queues in 1
        stores = [redis.Redis.from_url(info.redis_url, db=database) for database in (0, 1)]
    found = []
    for db in stores:
        for key in db.scan_iter(count=1000):
            kind = db.type(key).decode()
            found.append(key)
            if kind == "stream":
                found += [v for _, fields in db.xrange(key) for v in fields.values()]
            elif kind == "string":
                value = db.get(key) or b""
                found.append(value)
                try:
                    found.append(decompress_snapshot(value))  # zstd, or zlib (segments)
                except (zlib.error, zstandard.ZstdError):
                    pass
            elif kind == "hash":
                found += [v for pair in db.hgetall(key).items() for v in pair]
            elif kind == "list":
                found += db.lrange(key, 0, -1)
            elif kind in ("set", "zset"):
                found += db.smembers(key) if kind == "set" else db.zrange(key, 0, -1)
        db.close()
    return b"\n".join(found)


def files_under(home: Path) -> bytes:
    """Every file's bytes; a copy of a snapshot (workers/state/snapshot_cache.py), the snapshots
    kept for as-of reads (workers/store/snapshot_rungs.py) and the texts those share
    (workers/store/rung_rows.py) inflated too."""
    found = []
    for path in home.rglob("*"):
        if path.is_file():
            found.append(raw := path.read_bytes())
            if path.parent.name == SNAPSHOT_CACHE and path.suffix == ".snapshot":
                found.append(decompress_snapshot(raw.partition(b"\n")[2]))
            if SNAPSHOT_RUNGS in path.parts and path.name[0].isdigit():
                apart = read_apart(raw)
                found.append(decompress_snapshot(apart[1] if apart else raw))
            if SNAPSHOT_RUNGS in path.parts and path.name == "rows.text":
                rows = SharedRows(path.parent)
                found.append(bytes(rows.apart(b"", Span((0, rows.held().text), (0, 0))).text))
    return b"\n".join(found)


def test_forget_a_user_leaves_nothing_of_them_and_the_rest_as_it_was(tmp_path: Path) -> None:
    # A snapshot kept for as-of reads at every publish (workers/store/snapshot_rungs.py)
    up = Pipeline(
        tmp_path / "data", {"ASSOCMEM_RETENTION_DAYS": "0.00001", "ASSOCMEM_RUNG_EVENTS": "1"}
    )
    try:
        url = up.url
        first = as_user(
            ALICE,
            "write",
            "zqxalicetext billing outage",
            "--concepts",
            "zqxaliceconcept,billing",
            url=url,
        )
        as_user("bob", "write", "bob billing retries", "--concepts", "billing,retries", url=url)
        time.sleep(1.5)  # older than the retention window
        assert cli_json("archive", "--now", url=url)["result"]["entries"] >= 1
        assert cli_json("archive", url=url)["segments"][0]["first"] == first["id"]  # archived
        as_user(
            ALICE,
            "write",
            "zqxalicetext again on billing",
            "--concepts",
            "zqxaliceconcept,billing",
            url=url,
        )
        as_user("bob", "write", "bob billing backoff", "--concepts", "billing,backoff", url=url)
        as_user(
            ALICE,
            "feedback",
            "--ids",
            first["id"],
            "--outcome",
            "1",
            "--concepts",
            "billing",
            url=url,
        )
        bob_before = hash_of_user(events_of(up), "bob")
        assert all(mark in redis_contents(up) for mark in MARKS)  # the scans see them
        deadline = time.monotonic() + 10
        while MARKS[0] not in files_under(up.home):  # the AOF, written every second
            assert time.monotonic() < deadline, "the AOF never held the user's text"
            time.sleep(0.2)
        copied = files_under(up.home / SNAPSHOT_CACHE)  # the API's copy of the snapshot
        assert all(m in copied for m in MARKS), "the scan of files misses the snapshot's copy"
        kept = files_under(up.home / SNAPSHOT_RUNGS)
        assert all(m in kept for m in MARKS), "the scan of files misses the kept snapshots"

        done = cli_json("forget", "--user", ALICE, "--yes", url=url)
        report = done["result"]
        assert done["state"] == "finished"
        assert report["events"] == 3 and report["memories"] == 2 and report["files_rewritten"]

        events = events_of(up)
        assert all(e.user != ALICE for e in events)
        assert [e.type for e in events if e.user is None] == ["subject.forgotten"]
        assert hash_of_user(events, "bob") == bob_before
        # at once: the API that told `forget` the job had finished serves what is left
        assert cli_json("state", url=url)["hash"] == content_hash(fold_from_zero(events))
        assert cli_json("replay", "--verify", url=url)["matches"]
        left = redis_contents(up)
        assert not [m for m in MARKS if m in left], "Redis still holds the user's words"
        assert ALICE.encode() not in left
        read = cli_json("read", "--concepts", "billing", url=url)
        assert {i["text"] for i in read["items"]} == {"bob billing retries", "bob billing backoff"}
    finally:
        up.stop()
    on_disk = files_under(up.home)  # the AOF rewritten, Redis stopped: every file as it stays
    assert not [m for m in MARKS if m in on_disk], "a file of the data directory holds them"
    assert ALICE.encode() not in on_disk


def test_delete_with_erase_takes_one_memory_out_of_the_log_for_real(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        url = up.url
        secret = cli_json("write", "zqxsecret rotation of the billing key", url=url)
        kept = cli_json("write", "the billing key rotates monthly", url=url)
        plain = cli("delete", kept["id"], url=url).stdout
        assert plain.startswith(f"{kept['id']} deleted at ")
        done = cli_json("delete", secret["id"], "--erase", url=url)
        assert done["erasure"]["state"] == "finished"
        assert done["erasure"]["result"]["events"] == 1
        assert b"zqxsecret" not in redis_contents(up)
        assert cli_json("read", "--concepts", "billing", url=url)["items"] == []
        assert cli_json("replay", "--verify", url=url)["matches"]
        events = events_of(up)
        assert [e.type for e in events] == ["memory.written", "memory.deleted", "memory.deleted"]
        refused = cli("get", kept["id"], url=url, check=False)
        assert refused.returncode != 0 and "deleted" in refused.stderr
    finally:
        up.stop()


def test_an_expired_memory_leaves_reads_at_once_and_the_expiry_pass_erases_it(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        url = up.url
        # long enough for the three commands before it expires, each a process of its own
        # (a second apiece on a busy machine), which 2 s was not
        brief = cli_json(
            "write", "zqxbrief door code 4471 for the billing room", "--expires-in", "8s", url=url
        )
        kept = cli_json("write", "the billing room is on the third floor", url=url)
        expires_at = cli_json("get", brief["id"], url=url)["expires_at"]
        assert expires_at > time.time()
        found = {i["id"] for i in cli_json("read", "--concepts", "billing", url=url)["items"]}
        assert found == {brief["id"], kept["id"]}
        time.sleep(max(0.0, expires_at - time.time()) + 0.2)
        found = {i["id"] for i in cli_json("read", "--concepts", "billing", url=url)["items"]}
        assert found == {kept["id"]}  # at once, before any pass ran
        assert brief["id"] not in {m["id"] for m in cli_json("list", url=url)["memories"]}
        gone = cli("get", brief["id"], url=url, check=False)
        assert gone.returncode != 0 and "expired" in gone.stderr
        done = cli_json("expire", url=url)
        assert done["result"]["expired"] == [brief["id"]]
        assert b"zqxbrief" not in redis_contents(up)
        assert cli_json("replay", "--verify", url=url)["matches"]
        assert cli("expire", url=url).stdout.strip() == "no memory had expired"
        refused = cli("write", "x", "--expires-in", "soon", url=url, check=False)
        assert refused.returncode == 2 and "is not a duration" in refused.stderr
    finally:
        up.stop()
