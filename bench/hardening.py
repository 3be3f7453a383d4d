"""What an attacker or a careless operator meets: each case of issue 57 against a live
pipeline, with the answer it gets. With --python, the same against the `up` of another
install first (a before/after table in one run). With --disk (root, where a tmpfs can be
mounted), a 64 MB disk filled under the pipeline too.

    .venv/bin/python bench/hardening.py
    .venv/bin/python bench/hardening.py --python /tmp/before/.venv/bin/python --disk
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import urllib3

from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import BANNER, banner_url
from assocmem.workers.runtime.redis_server import free_port, is_alive

MB = 1024 * 1024


class Pipeline:
    def __init__(self, python: str, home: Path, env: dict[str, str] | None = None) -> None:
        self.python, self.home = python, home
        self.process = subprocess.Popen(
            [
                python,
                "-m",
                "assocmem.api.cli",
                "up",
                "--data",
                str(home),
                "--port",
                str(free_port()),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd="/tmp",
            # the probes are few: the default limits stand, the failed-key throttle among them
            env={**os.environ, **(env or {})},
        )
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if line.startswith(BANNER):
                self.url = banner_url(line)
                break
            if not line and self.process.poll() is not None:
                raise RuntimeError(f"{python} up exited with code {self.process.returncode}")
        self.key = (home / "api-key").read_text().strip()
        self.pool = urllib3.PoolManager(timeout=60.0, retries=False)

    def call(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        key: str | None = "",
        headers: dict[str, str] | None = None,
    ) -> urllib3.BaseHTTPResponse:
        # a connection each: a case that broke one must not answer for the next
        sent = {"content-type": "application/json", "connection": "close", **(headers or {})}
        if key is not None:
            sent["authorization"] = f"Bearer {key or self.key}"
        return self.pool.request(method, f"{self.url}{path}", body=body, headers=sent)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(60)


def _status(response: urllib3.BaseHTTPResponse) -> str:
    return str(response.status)


def deep_json(up: Pipeline) -> str:
    body = b'{"text": "x", "z": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    return _status(up.call("POST", "/v1/memories", body))


def requeue_dotted(up: Pipeline) -> str:
    return _status(up.call("POST", "/v1/jobs/p.v/requeue"))


def unknown_job(up: Pipeline) -> str:
    return _status(up.call("GET", "/v1/jobs/no-such-job"))


def importance_float(up: Pipeline) -> str:
    return _status(up.call("POST", "/v1/memories", b'{"text": "billing", "importance": 5.0}'))


def blank_concept(up: Pipeline) -> str:
    body = b'{"text": "billing failed", "concepts": ["   "]}'
    return _status(up.call("POST", "/v1/memories", body))


def nul_text(up: Pipeline) -> str:
    return _status(up.call("POST", "/v1/memories", b'{"text": "billing\\u0000failed"}'))


def duplicate_key(up: Pipeline) -> str:
    body = b'{"text": "billing failed", "text": "all is well"}'
    return _status(up.call("POST", "/v1/memories", body))


def document_without_key(up: Pipeline) -> str:
    return f"{_status(up.call('GET', '/openapi.json', key=None))} (by design: README)"


def idle_sockets(up: Pipeline) -> str:
    host, port = up.url.removeprefix("http://").split(":")
    sockets = [socket.create_connection((host, int(port))) for _ in range(1000)]
    time.sleep(1.0)  # the server has accepted them all
    try:
        started = time.perf_counter()
        read = up.call("POST", "/v1/read", b'{"concepts": ["billing"]}')
        return f"{read.status} in {(time.perf_counter() - started) * 1000:.0f} ms"
    except urllib3.exceptions.HTTPError as exc:
        return type(exc).__name__
    finally:
        for s in sockets:
            s.close()


def revoke_last_operator_key(up: Pipeline) -> str:
    keys = up.call("GET", "/v1/keys").json()["keys"]
    operators = [k for k in keys if k["operator"]]
    revoked = up.call("DELETE", f"/v1/keys/{operators[0]['id']}")
    after = up.call("GET", "/v1/health")
    return f"{revoked.status}, then a call: {after.status}"


def pinned_key_widened(up: Pipeline) -> str:
    body = b'{"agent": "bob-agent", "permissions": ["read"], "user": "bob"}'
    created = up.call("POST", "/v1/keys", body)
    if created.status != 201:
        return f"pinning refused ({created.status}): no pinned keys"
    key = created.json()["key"]
    read = up.call(
        "POST",
        "/v1/read",
        b'{"concepts": ["billing"]}',
        key=key,
        headers={"x-assocmem-user": "alice"},
    )
    return f"{read.status} for user alice"


def guessed_keys(up: Pipeline) -> str:
    counts: Counter[int] = Counter()
    for n in range(60):
        wrong = up.call("POST", "/v1/read", b'{"concepts": ["a"]}', key=f"amk_000000000000_{n}")
        counts[wrong.status] += 1
    valid = up.call("POST", "/v1/read", b'{"concepts": ["a"]}')
    said = ", ".join(f"{n} x {status}" for status, n in sorted(counts.items()))
    return f"{said}; a valid key then: {valid.status}"


def second_up(up: Pipeline) -> str:
    started = time.perf_counter()
    try:
        second = subprocess.run(
            [up.python, "-m", "assocmem.api.cli", "up", "--data", str(up.home), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/tmp",
        )
    except subprocess.TimeoutExpired:
        return "still running after 30 s"
    return f"exit {second.returncode} in {time.perf_counter() - started:.1f} s"


CASES: list[tuple[str, Callable[[Pipeline], str]]] = [
    ("JSON 1,000 deep, unknown field", deep_json),
    ("requeue of job id p.v", requeue_dotted),
    ("unknown job id", unknown_job),
    ("importance 5.0", importance_float),
    ("concept of spaces", blank_concept),
    ("NUL in text", nul_text),
    ("a key given twice", duplicate_key),
    ("/openapi.json, no key", document_without_key),
    ("1,000 idle sockets, a read", idle_sockets),
    ("read key of bob as alice", pinned_key_widened),
    ("second up, same directory", second_up),
    ("revoke last operator key", revoke_last_operator_key),  # may lock the rest out
    ("60 unknown keys, one peer", guessed_keys),  # last: the peer is refused a minute
]


@contextlib.contextmanager
def small_disk() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as parent:
        mount = Path(parent) / "disk"
        mount.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], check=True)
        try:
            yield mount
        finally:
            subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with contextlib.suppress(OSError):
        while True:
            os.write(descriptor, b"\0" * 65536)
    os.close(descriptor)


def _answer(up: Pipeline, method: str, path: str, body: bytes | None = None) -> str:
    try:
        return str(up.call(method, path, body).status)
    except urllib3.exceptions.HTTPError as exc:
        return type(exc).__name__


def disk_full(python: str) -> list[tuple[str, str]]:
    """Fill a 64 MB disk to its end under a pipeline, and free it."""
    rows = []
    with small_disk() as mount:
        up = Pipeline(python, mount / "data", {"ASSOCMEM_MIN_FREE_MB": "16"})
        try:
            notes = [b'{"text": "billing note %d"}' % n for n in range(20)]
            acknowledged = sum(_answer(up, "POST", "/v1/memories", n) == "202" for n in notes)
            info = read_run_file(up.home)
            redis_pid = info.redis_pid if info else None
            _fill(mount / "ballast")
            time.sleep(3)  # what `up` and Redis meet meanwhile
            rows.append(("write, disk full", _answer(up, "POST", "/v1/memories", notes[0])))
            rows.append(
                ("read, disk full", _answer(up, "POST", "/v1/read", b'{"text": "billing"}'))
            )
            time.sleep(5)
            up_alive = "alive" if up.process.poll() is None else "exited"
            redis_alive = "alive" if redis_pid and is_alive(redis_pid) else "gone"
            rows.append(("up / its first Redis, 8 s on", f"{up_alive} / {redis_alive}"))
            (mount / "ballast").unlink()
            started = time.perf_counter()
            status = ""
            while time.perf_counter() - started < 60 and status != "202":
                status = _answer(up, "POST", "/v1/memories", b'{"text": "billing after"}')
                time.sleep(0.2)
            rows.append(
                ("write once freed", f"{status} after {time.perf_counter() - started:.1f} s")
            )
            try:
                listed = up.call("GET", "/v1/memories?limit=100").json()["memories"]
                kept = sum(1 for m in listed if m["text"].startswith("billing note"))
                rows.append(("acknowledged notes kept", f"{kept} of {acknowledged}"))
            except (urllib3.exceptions.HTTPError, KeyError, ValueError) as exc:
                rows.append(("acknowledged notes kept", f"cannot list: {type(exc).__name__}"))
        finally:
            with contextlib.suppress(Exception):
                up.stop()
    return rows


def run(python: str, disk: bool) -> list[tuple[str, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as home:
        up = Pipeline(python, Path(home) / "data")
        try:
            up.call("POST", "/v1/memories", b'{"text": "billing for alice", "user": "alice"}')
            for name, case in CASES:
                try:
                    rows.append((name, case(up)))
                except Exception as exc:  # a case the old install cannot even ask
                    rows.append((name, f"{type(exc).__name__}: {exc}"[:60]))
                print(f"  {name:<32} {rows[-1][1]}", file=sys.stderr)
        finally:
            up.stop()
    if disk:
        rows += disk_full(python)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", help="also run against the `up` of this interpreter, first")
    parser.add_argument("--disk", action="store_true", help="also fill a 64 MB tmpfs (root)")
    args = parser.parse_args()
    before = run(args.python, args.disk) if args.python else None
    after = run(sys.executable, args.disk)
    print(f"\n| case | {'before | ' if before else ''}after |")
    print(f"|---|{'---|' if before else ''}---|")
    for n, (name, now) in enumerate(after):
        then = f"{before[n][1]} | " if before and n < len(before) else ""
        print(f"| {name} | {then}{now} |")


if __name__ == "__main__":
    main()
