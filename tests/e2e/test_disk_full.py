"""A full disk refuses writes and nothing else: on a small tmpfs, `up` keeps its Redis, reads
go on, writes get a 507 naming the disk until there is room, and then all goes on."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import urllib3

from assocmem.api.ops.run_file import read_run_file
from assocmem.workers.runtime.redis_server import is_alive
from tests.e2e.pipeline import Pipeline, cli_json

pytestmark = pytest.mark.single_redis  # the embedded Redis on the small disk, restarted there

MB = 1024 * 1024
MIN_FREE_MB = 16


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MB tmpfs, mounted for the test (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root: CI runs as root, run it there")
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here (a container without CAP_SYS_ADMIN?): {mounted.stderr}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _free(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def _fill(path: Path, leave: int) -> None:
    """Write a ballast file until `leave` bytes are free (0: till the disk refuses). Filling
    the disk, the last 2 x MIN_FREE_MB go in one call: written a MB at a time, on a busy
    machine `up` could see the disk short before it was full, and ease Redis before the write
    a test means to meet the full disk."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while _free(path.parent) - MB >= (leave or 2 * MIN_FREE_MB * MB):
            os.write(descriptor, b"\0" * MB)
        if not leave:
            with contextlib.suppress(OSError):  # then the small writes below take the rest
                size = os.fstat(descriptor).st_size
                os.posix_fallocate(descriptor, size, _free(path.parent) - 64 * 1024)
        while not leave:
            os.write(descriptor, b"\0" * 4096)
    except OSError:
        assert not leave, "the disk filled before the ballast was written"
    finally:
        os.close(descriptor)


def _call(
    up: Pipeline, method: str, path: str, body: dict | None = None
) -> urllib3.BaseHTTPResponse:
    return urllib3.request(
        method,
        f"{up.url}{path}",
        json=body,
        headers={"authorization": f"Bearer {up.key}"},
        retries=False,
        timeout=30.0,
    )


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


def _same_redis(up: Pipeline, pid: int | None) -> bool:
    info = read_run_file(up.home)
    return pid is not None and info is not None and info.redis_pid == pid and is_alive(pid)


def _read_texts(up: Pipeline, limit: int = 10) -> list[str]:
    body = {"concepts": ["billing"], "record_access": False, "limit": limit}
    found = _call(up, "POST", "/v1/read", body)
    assert found.status == 200, found.data
    return sorted(i["text"] for i in found.json()["items"])


def test_a_full_disk_refuses_writes_while_reads_go_on_and_redis_lives(small_disk: Path) -> None:
    up = Pipeline(small_disk / "data", {"ASSOCMEM_MIN_FREE_MB": str(MIN_FREE_MB)})
    try:
        written = cli_json("write", "the billing job timed out", url=up.url)
        _wait(lambda: _read_texts(up) == ["the billing job timed out"], 30, "the note read")
        store = redis.Redis.from_url(up.info.redis_url)
        redis_pid = up.info.redis_pid
        _wait(
            lambda: store.config_get("appendfsync")["appendfsync"] == "always",
            10,
            "up restoring its Redis's AOF policy",
        )

        _fill(small_disk / "ballast", leave=(MIN_FREE_MB // 2) * MB)
        _wait(lambda: "writes" in _call(up, "GET", "/readyz").json(), 10, "readyz saying why")
        ready = _call(up, "GET", "/readyz")
        assert ready.status == 200, "reads go on: the replica stays in service"
        assert f"the disk of {small_disk / 'data'} has" in ready.json()["writes"]
        refused = _call(up, "POST", "/v1/memories", {"text": "the billing retry worked"})
        assert refused.status == 507, refused.data
        assert refused.headers["Retry-After"] == "30"
        problem = refused.json()
        assert problem["code"] == "disk_low" and "ASSOCMEM_MIN_FREE_MB" in problem["detail"]
        assert _read_texts(up) == ["the billing job timed out"]
        metrics = _call(up, "GET", "/metrics").data.decode()
        assert "assocmem_disk_writes_refused 1.0" in metrics
        assert 'assocmem_disk_free_bytes{path="' in metrics
        # `up` has its Redis sync every second meanwhile: a failed AOF write then refuses
        # writes instead of making Redis exit
        _wait(
            lambda: store.config_get("appendfsync")["appendfsync"] == "everysec",
            10,
            "up easing its Redis's AOF",
        )

        _fill(small_disk / "ballast-2", leave=0)  # another program takes the rest
        for _ in range(20):  # each counted by the rate limits: writes Redis cannot keep
            assert _read_texts(up) == ["the billing job timed out"]
            time.sleep(0.1)
        assert _call(up, "GET", "/healthz").status == 200
        assert _same_redis(up, redis_pid), "Redis lived through it, unrestarted"
        redis_log = (small_disk / "data" / "redis" / "redis.log").read_text()
        assert "writing to the AOF file" in redis_log, "Redis met the full disk itself"

        (small_disk / "ballast").unlink()
        (small_disk / "ballast-2").unlink()
        _wait(lambda: "writes" not in _call(up, "GET", "/readyz").json(), 10, "room seen")
        again = _call(up, "POST", "/v1/memories", {"text": "the billing retry worked"})
        assert again.status == 202, again.data
        _wait(
            lambda: _read_texts(up) == ["the billing job timed out", "the billing retry worked"],
            30,
            "the write read back",
        )
        _wait(
            lambda: store.config_get("appendfsync")["appendfsync"] == "always",
            10,
            "up restoring its Redis's AOF policy",
        )
        assert written["id"] in {
            m["id"] for m in _call(up, "GET", "/v1/memories").json()["memories"]
        }
        assert up.process.poll() is None and _same_redis(up, redis_pid)
    finally:
        up.stop()


def test_a_disk_filled_in_one_go_costs_no_acknowledged_write_and_up_lives(
    small_disk: Path,
) -> None:
    """A copy of a big file fills the disk before any check sees it: Redis (syncing at
    every write) exits at its next write, and `up` starts it again on the room it kept
    back rather than giving up; reads are answered again, and once the file is gone writes
    go on, every acknowledged one there."""
    up = Pipeline(small_disk / "data", {"ASSOCMEM_MIN_FREE_MB": str(MIN_FREE_MB)})
    try:
        notes = [f"billing note {n}" for n in range(20)]
        for text in notes:
            assert _call(up, "POST", "/v1/memories", {"text": text}).status == 202
        assert (small_disk / "data" / "disk-reserve").stat().st_size == MIN_FREE_MB * MB // 2
        first_redis = up.info.redis_pid
        store = redis.Redis.from_url(up.info.redis_url, socket_timeout=10.0)
        _fill(small_disk / "ballast", leave=0)
        # A write whose AOF entry needs new pages, at once: `up` sees the disk short within
        # half a second and eases Redis to `everysec`, which refuses writes instead of exiting
        # (the first test), so a few small ones may come too late on a busy machine
        with contextlib.suppress(redis.RedisError):
            store.set("disk-full-test", b"\0" * MB)
        for _ in range(30):  # counted by the rate limits: Redis meets the full disk
            with contextlib.suppress(urllib3.exceptions.HTTPError):
                _call(up, "GET", "/v1/health")
            time.sleep(0.1)

        def read_answers() -> bool:
            try:
                return len(_read_texts(up, limit=50)) == len(notes)
            except (AssertionError, urllib3.exceptions.HTTPError):
                return False

        def redis_restarted() -> bool:
            # More writes to Redis (the rate limits count each call): its AOF's last page
            # on the tmpfs still has room for a few dozen before a write needs a new one
            for _ in range(5):
                with contextlib.suppress(urllib3.exceptions.HTTPError):
                    _call(up, "GET", "/v1/health")
            restarted = read_run_file(up.home)
            return restarted is not None and restarted.redis_pid != first_redis

        # Reads may be answered before Redis meets the disk (on a busy machine): it exits
        # at a write
        _wait(redis_restarted, 60, "Redis exiting at a write and up starting it again")
        _wait(read_answers, 30, "reads answered on the full disk")
        assert up.process.poll() is None, "up lives on"
        assert not (small_disk / "data" / "disk-reserve").exists(), "its room was given to it"
        refused = _call(up, "POST", "/v1/memories", {"text": "billing while full"})
        assert refused.status in (503, 507), refused.data

        (small_disk / "ballast").unlink()
        _wait(
            lambda: _call(up, "POST", "/v1/memories", {"text": "billing after"}).status == 202,
            30,
            "writes back",
        )
        listed = _call(up, "GET", "/v1/memories?limit=100").json()["memories"]
        assert set(notes) <= {m["text"] for m in listed}, "every acknowledged write kept"
        _wait(lambda: (small_disk / "data" / "disk-reserve").exists(), 10, "the reserve made again")
    finally:
        up.stop()
