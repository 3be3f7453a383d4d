"""`up` has its Redis rewrite the AOF once writes have stopped, not while they stream in."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from assocmem.workers.errors import SettingError
from assocmem.workers.jobs.idle_rewrite import QUIET_GROWTH, IdleRewrite
from assocmem.workers.runtime.redis_server import aof_rewriting, start_redis
from assocmem.workers.runtime.settings import load_settings

SNAPSHOT = b"x" * (QUIET_GROWTH + 1)
"""A stand-in for a published snapshot: big enough that writing one is not quiet."""


@pytest.fixture
def client(tmp_path: Path) -> Iterator[redis.Redis]:
    server = start_redis(tmp_path / "redis")
    connection = redis.Redis(port=server.port)
    try:
        yield connection
    finally:
        connection.close()
        server.stop()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def aof_sizes(client: redis.Redis) -> tuple[int, int]:
    persistence = client.info("persistence")
    return int(persistence["aof_current_size"]), int(persistence["aof_base_size"])


def rewritten(client: redis.Redis, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not aof_rewriting(client.info("persistence")):
            return
        time.sleep(0.05)
    raise AssertionError("the AOF rewrite did not end")


def test_snapshots_replaced_while_they_stream_in_are_rewritten_away_once_writes_stop(
    client: redis.Redis,
) -> None:
    clock = Clock()
    idle = IdleRewrite(client, quiet=60.0, least=1 << 20, every=5.0, clock=clock)
    for _ in range(8):  # each replaces the last: the AOF keeps all 8, the data only one
        clock.now += 10.0
        client.set("am:{t}:snapshot", SNAPSHOT)
        assert not idle.check(), "rewritten while writes stream in"
    before, _ = aof_sizes(client)
    assert before > 8 * len(SNAPSHOT)
    clock.now += 50.0
    assert not idle.check(), "quiet for 50 s of the 60 asked"
    clock.now += 2.0
    assert not idle.check(), "asked again within `every` seconds"
    clock.now += 10.0
    assert idle.check()
    rewritten(client)
    after, base = aof_sizes(client)
    assert after < 2 * len(SNAPSHOT) and base <= after
    assert client.get("am:{t}:snapshot") == SNAPSHOT


def test_a_quiet_aof_that_grew_little_since_its_last_rewrite_is_left_as_it_is(
    client: redis.Redis,
) -> None:
    clock = Clock()
    idle = IdleRewrite(client, quiet=60.0, least=1 << 20, every=5.0, clock=clock)
    client.set("am:{t}:snapshot", b"small")
    for _ in range(20):
        assert not idle.check()
        clock.now += 10.0
    assert int(client.info("persistence")["aof_rewrites"]) == 0


def test_the_quiet_time_comes_from_the_environment_and_a_negative_one_is_refused() -> None:
    assert load_settings({}).aof_rewrite_quiet == 60.0
    assert load_settings({"ASSOCMEM_AOF_REWRITE_QUIET": "0"}).aof_rewrite_quiet == 0.0
    with pytest.raises(SettingError, match="ASSOCMEM_AOF_REWRITE_QUIET='-5' is invalid"):
        load_settings({"ASSOCMEM_AOF_REWRITE_QUIET": "-5"})
