"""Hostile inputs against a live pipeline: the status each gets, how long it takes, the
API's RSS before and after, and whether the log grew. With --python, the same against
a pipeline of another install (for a before/after table in one run).

    .venv/bin/python bench/hostile.py
    .venv/bin/python bench/hostile.py --python /tmp/oldvenv/bin/python
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import urllib3

from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import BANNER, UNLIMITED, banner_url
from assocmem.workers.runtime.redis_server import free_port

CASES: list[tuple[str, str, str, bytes]] = [
    ("ts NaN", "POST", "/v1/memories", b'{"text": "x", "ts": NaN}'),
    ("ts Infinity", "POST", "/v1/memories", b'{"text": "x", "ts": Infinity}'),
    ("ts 1e400", "POST", "/v1/activities", b'{"text": "x", "ts": 1e400}'),
    ("ts false", "POST", "/v1/memories", b'{"text": "x", "ts": false}'),
    ("importance true", "POST", "/v1/memories", b'{"text": "x", "importance": true}'),
    ('importance "3"', "POST", "/v1/memories", b'{"text": "x", "importance": "3"}'),
    ("importance 4.0", "POST", "/v1/memories", b'{"text": "x", "importance": 4.0}'),
    ("floor false", "POST", "/v1/read", b'{"concepts": ["x"], "floor": false}'),
    ("without_feedback 0", "POST", "/v1/read", b'{"concepts": ["x"], "without_feedback": 0}'),
    ("lone surrogate text", "POST", "/v1/memories", b'{"text": "\\ud800"}'),
    ("lone surrogate concept", "POST", "/v1/memories", b'{"text": "x", "concepts": ["\\ud800"]}'),
    (
        "as_of 20 nines",
        "POST",
        "/v1/read",
        b'{"concepts": ["x"], "as_of": "99999999999999999999-0"}',
    ),
    (
        "as_of seq 20 nines",
        "POST",
        "/v1/read",
        b'{"concepts": ["x"], "as_of": "1-99999999999999999999"}',
    ),
    ("read now NaN", "POST", "/v1/read", b'{"concepts": ["x"], "now": NaN}'),
    ("read 10 MB text", "POST", "/v1/read", b'{"text": "' + b"word " * 2_000_000 + b'"}'),
    (
        "read 100,000 concepts",
        "POST",
        "/v1/read",
        b'{"concepts": [' + b",".join(b'"c%d"' % n for n in range(100_000)) + b"]}",
    ),
    (
        "422 echo of 1 MB",
        "POST",
        "/v1/memories",
        b'{"text": "x", "importance": "' + b"9" * 1_000_000 + b'"}',
    ),
    (
        "batch of 100 MB",
        "POST",
        "/v1/memories/batch",
        b'{"items": [' + b",".join([b'{"text": "' + b"x" * 99_000 + b'"}'] * 1000) + b"]}",
    ),
    ("bad JSON", "POST", "/v1/read", b"{not json"),
    ("unknown route", "GET", "/v1/nowhere", b""),
]


def spawn(python: str, home: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [python, "-m", "assocmem.api.cli", "up", "--data", str(home), "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd="/tmp",
        env={**os.environ, **UNLIMITED},
    )
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if line.startswith(BANNER):
            return process, banner_url(line)
        if not line and process.poll() is not None:
            raise RuntimeError(f"{python} up exited with code {process.returncode}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


AUTH: dict[str, str] = {}
"""The pipeline's operator key as a header (a pipeline from before keys ignores it)."""


def log_length(pool: urllib3.PoolManager, url: str) -> int:
    return int(pool.request("GET", f"{url}/v1/health", headers=AUTH).json()["log_length"])


def slow_headers(url: str, connections: int, seconds: float) -> int:
    """Open connections that send a header line now and nothing more; how many are still
    open after `seconds`."""
    host, port = url.removeprefix("http://").split(":")
    sockets = []
    for _ in range(connections):
        s = socket.create_connection((host, int(port)))
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setblocking(False)
        sockets.append(s)
    time.sleep(seconds)
    still = 0
    for s in sockets:
        try:
            data = s.recv(4096)
            still += 0 if (data == b"" or data.startswith(b"HTTP/1.1 408")) else 1
        except BlockingIOError:
            still += 1
        s.close()
    return still


def health_during_big_read(url: str) -> float:
    """Milliseconds a health check takes while a 10 MB read is being sent."""

    def big() -> None:
        def chunks():
            yield b'{"text": "'
            for _ in range(160):
                time.sleep(0.005)
                yield b"word " * 13_107
            yield b'"}'

        urllib3.PoolManager().request(
            "POST",
            f"{url}/v1/read",
            body=chunks(),
            chunked=True,
            headers={"content-type": "application/json", **AUTH},
        )

    thread = threading.Thread(target=big)
    thread.start()
    time.sleep(0.3)
    start = time.perf_counter()
    urllib3.request("GET", f"{url}/v1/health", headers=AUTH)
    took = (time.perf_counter() - start) * 1000
    thread.join(120)
    return took


def run(python: str, label: str) -> None:
    with tempfile.TemporaryDirectory() as home:
        process, url = spawn(python, Path(home) / "data")
        try:
            info = read_run_file(Path(home) / "data")
            assert info is not None
            key = read_key_file(Path(home) / "data")
            AUTH.clear()
            AUTH.update({"authorization": f"Bearer {key}"} if key else {})
            pool = urllib3.PoolManager(timeout=300.0, retries=False)
            pool.request(
                "POST",
                f"{url}/v1/memories",
                body=b'{"text": "seed note"}',
                headers={"content-type": "application/json", **AUTH},
            )
            before = rss_mb(info.api_pid)
            print(f"\n{label}: API RSS {before:.0f} MB at start")
            print(f"  {'input':<26} {'status':>6} {'time':>9} {'bytes back':>10} {'log +':>5}")
            for name, method, path, body in CASES:
                length = log_length(pool, url)
                start = time.perf_counter()
                try:
                    response = pool.request(
                        method,
                        f"{url}{path}",
                        body=body or None,
                        headers={"content-type": "application/json", **AUTH},
                    )
                    status, size = str(response.status), len(response.data)
                except urllib3.exceptions.HTTPError as exc:
                    status, size = type(exc).__name__[:6], 0
                took = time.perf_counter() - start
                time.sleep(0.1)
                grew = log_length(pool, url) - length
                print(f"  {name:<26} {status:>6} {took * 1000:8.0f}ms {size:>10,} {grew:>5}")
            print(f"  API RSS after: {rss_mb(info.api_pid):.0f} MB")
            print(
                f"  slow-header connections still open after 15 s: {slow_headers(url, 200, 15.0)} of 200"
            )
            print(f"  health while a 10 MB read is in flight: {health_during_big_read(url):.1f} ms")
        finally:
            process.terminate()
            process.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", help="also run against the `up` of this interpreter, first")
    args = parser.parse_args()
    if args.python:
        run(args.python, f"before ({args.python})")
    run(sys.executable, "after (this tree)")


if __name__ == "__main__":
    main()
