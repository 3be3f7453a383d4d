"""Erasure on both stores: the subject's events leave the log and the archive, the others
keep their positions, what is appended during the rewrite is kept, and the published
snapshot is the fold of what is left; a whole tenant leaves nothing."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest
import redis

from assocmem.engine.position import ZERO
from assocmem.engine.principal import Principal
from assocmem.engine.snapshot.codec import content_hash
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import Note, Rating
from assocmem.workers.jobs.erasure import erase, is_subject_of, subject_of
from assocmem.workers.runtime.redis_server import start_redis
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.state.rebuild import Rebuild, rebuild
from assocmem.workers.store.ports import iter_entries
from assocmem.workers.store.redis.archive import RedisArchive
from assocmem.workers.store.redis.rewrite import RedisRewriter
from tests.stores import KINDS, Clock, make_runtime

ALICE = Principal("default", "agent", user="alice")
BOB = Principal("default", "agent", user="bob")


@pytest.fixture(params=KINDS)
def anywhere(request: pytest.FixtureRequest) -> Runtime:
    yield from make_runtime(request, request.param, Clock())


def positions(runtime: Runtime) -> list[str]:
    return [str(p) for chunk in iter_entries(runtime.log, "default", ZERO) for p, _ in chunk]


def test_a_user_s_events_go_and_the_rest_keep_their_positions(anywhere: Runtime) -> None:
    app = Application(anywhere)
    [a1] = app.write(ALICE, [Note("alice billing", ["billing", "alice"])])
    [b1] = app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.give_feedback(ALICE, Rating([str(a1.position)], 1.0, ["billing"]))
    [b2] = app.write(BOB, [Note("bob retries", ["retries", "bob"])])
    subject = subject_of("user", "alice")
    appended = []

    def keep(entry: tuple) -> bool:  # an append lands while the log is copied
        if not appended:
            appended.append(app.write(ALICE, [Note("alice during", ["late"])])[0].position)
        return not is_subject_of(subject)(entry)

    removed = anywhere.log.rewrite("default", keep)
    assert len(removed) == 2
    assert positions(anywhere) == [str(b1.position), str(b2.position), str(appended[0])]
    assert anywhere.log.epoch("default") == 1


def test_erase_publishes_the_fold_of_what_is_left_and_reports_what_went(anywhere: Runtime) -> None:
    app = Application(anywhere)
    [a1] = app.write(ALICE, [Note("alice billing", ["billing", "alice"])])
    app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.give_feedback(ALICE, Rating([str(a1.position)], 1.0, ["billing"]))
    report = erase(anywhere, "default", subject_of("user", "alice"))
    assert (report.events, report.memories, report.links) == (2, 1, 1)
    assert report.learned_weight > 0
    left = rebuild(anywhere.log, anywhere.snapshots, "default", Rebuild(from_zero=True))
    served = rebuild(anywhere.log, anywhere.snapshots, "default", Rebuild())
    assert content_hash(served) == content_hash(left) and len(left.memories) == 1
    assert str(left.position) == report.position


def test_erasing_a_tenant_leaves_nothing_of_it(anywhere: Runtime) -> None:
    app = Application(anywhere)
    app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.write(Principal("other", "agent"), [Note("other tenant", ["kept"])])
    report = erase(anywhere, "default", subject_of("tenant", "default"))
    assert report.events == 1 and report.memories == 1
    assert positions(anywhere) == [] and anywhere.snapshots.latest_position("default") is None
    assert "default" not in anywhere.log.tenants() and anywhere.log.length("other") == 1


def kept(directory: Path, secret: bytes, wait: float = 5.0) -> bool:
    """Whether a file of `directory` holds `secret` (Redis removes the files a rewrite
    replaced in the background: they are given `wait` seconds to go)."""
    deadline = time.monotonic() + wait
    while any(secret in _bytes_of(path) for path in directory.iterdir()):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)
    return False


def _bytes_of(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:  # removed since it was listed
        return b""


def test_an_erasure_s_rewrite_asked_during_another_keeps_nothing_erased(
    tmp_path: Path,
) -> None:
    """A rewrite already running (Redis's own, or the one `up` asks for once writes stop)
    forked before the erasure deleted anything: its files would keep what was erased, so
    the erasure's waits for it and then asks again."""
    server = start_redis(tmp_path / "redis")
    client = redis.Redis(port=server.port)
    try:
        client.set("subject", b"erase-me-" * 1000)
        client.set("bulk", b"b" * (200 << 20))  # a rewrite long enough to still run below
        with contextlib.suppress(redis.ResponseError):  # Redis's own may have begun
            client.bgrewriteaof()  # forks now, with the subject in it
        client.delete("subject")
        RedisRewriter(client, RedisArchive(client)).compact()
        assert not kept(tmp_path / "redis" / "appendonlydir", b"erase-me-erase-me")
    finally:
        client.close()
        server.stop()
