"""`serve`, `worker` and `cron` started by hand, as a supervisor (deploy/compose.yaml,
deploy/systemd/) starts them beside their Redis: they wait for it rather than die with a
traceback, serve a write, a read and a consolidation once it is there, and refuse plainly
what no wait can mend (a wrong password, a URL that leads to no Redis)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import urllib3

from assocmem.api.client import Client
from assocmem.workers.runtime.redis_server import free_port, start_redis
from assocmem.workers.store.redis.keys import cron_lease_key

SERVICES = ("serve", "worker", "cron")
"""The commands a deployment runs, one process each (tests/unit/deploy/ holds the deploy
files to them)."""


def started(command: list[str], redis_url: str, home: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "ASSOCMEM_HOME": str(home),
        "ASSOCMEM_CONSOLIDATE_AT": "off" if command[0] != "cron" else "30 2 * * *",
    }
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "assocmem.api.cli", *command],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def status(url: str) -> int | None:
    try:
        return urllib3.request("GET", url, timeout=2.0, retries=False).status
    except urllib3.exceptions.HTTPError:
        return None


def wait_for(condition, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


def bootstrapped_key(redis_url: str) -> str:
    """The first operator key of a deployment, as its operator makes it."""
    done = subprocess.run(
        [sys.executable, "-m", "assocmem.api.cli", "keys", "bootstrap"],
        env={**os.environ, "REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_the_api_workers_and_cron_started_before_their_redis_wait_for_it_then_serve(
    tmp_path: Path,
) -> None:
    port, http_port = free_port(), free_port()
    url = f"redis://127.0.0.1:{port}/0"
    api_url = f"http://127.0.0.1:{http_port}"
    logs = {name: tmp_path / f"{name}.log" for name in SERVICES}
    processes = [
        started(["serve", "--port", str(http_port)], url, tmp_path / "home", logs["serve"]),
        started(["worker"], url, tmp_path / "home", logs["worker"]),
        started(["cron"], url, tmp_path / "home", logs["cron"]),
    ]
    server = None
    try:
        wait_for(lambda: status(f"{api_url}/healthz") == 200, "the API answering")
        assert status(f"{api_url}/readyz") == 503  # no Redis yet
        assert all(p.poll() is None for p in processes)
        server = start_redis(tmp_path / "redis", port=port)
        queues = redis.Redis(port=port, db=1)  # the queues' database, next to the data's
        wait_for(lambda: status(f"{api_url}/readyz") == 200, "the API ready")
        wait_for(lambda: queues.scard("rq:workers") == 1, "the worker registered")
        wait_for(lambda: queues.exists(cron_lease_key()) == 1, "the cron holding its lease")
        with Client(api_url, api_key=bootstrapped_key(url)) as api:
            for text in ("the deploy broke billing", "the deploy broke billing again"):
                api.write(text, concepts=["deploy", "billing"])
            assert len(api.read(concepts=["deploy"])["items"]) == 2
            job = api.consolidate()
            wait_for(lambda: api.job(job["id"])["state"] == "finished", "the consolidation run")
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        lingering = []
        for name, process in zip(logs, processes, strict=True):
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:  # seen once in a whole suite: say what it did
                process.kill()
                lingering.append(f"{name}, whose log ends:\n{logs[name].read_text()[-3000:]}")
        if server is not None:
            server.stop()
        assert not lingering, f"still running 30 s after SIGTERM: {lingering}"
    for name, log in logs.items():
        said = log.read_text()
        assert "Traceback" not in said, f"{name} logged a traceback:\n{said[-3000:]}"
        if name != "serve":
            assert said.count("cannot reach Redis") >= 1, name  # as it waited to start


def worker_on(redis_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assocmem.api.cli", "worker"],
        env={**os.environ, "REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_worker_refuses_a_wrong_password_and_a_url_that_leads_to_no_redis(
    tmp_path: Path,
) -> None:
    server = start_redis(tmp_path / "redis", password="right")
    try:
        done = worker_on(f"redis://:wrong@127.0.0.1:{server.port}/0")
        assert done.returncode == 1
        assert "Error: worker: Redis refused the credentials of REDIS_URL" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        server.stop()
    with socket.socket() as http:  # something that answers, but not as Redis
        http.bind(("127.0.0.1", 0))
        http.listen()
        url = f"redis://127.0.0.1:{http.getsockname()[1]}/0"
        responder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import socket,sys; s=socket.socket(fileno=int(sys.argv[1]));"
                " c,_=s.accept(); c.recv(100); c.sendall(b'HTTP/1.1 400 Bad Request\\r\\n\\r\\n')",
                str(http.fileno()),
            ],
            pass_fds=(http.fileno(),),
        )
        done = worker_on(url)
        responder.wait(10)
    assert done.returncode == 1
    assert "Error: worker: REDIS_URL does not lead to a Redis" in done.stderr


def _blocked(task: Path) -> int:
    line = next(x for x in (task / "status").read_text().splitlines() if x.startswith("SigBlk:"))
    return int(line.split()[1], 16)


@pytest.mark.parametrize("command", ["worker", "cron"])
def test_only_the_main_thread_takes_the_signal_to_stop(tmp_path: Path, command: str) -> None:
    """A SIGTERM the kernel gives another thread leaves the main one blocked in its wait (for
    a job: RQ's dequeue, up to 405 s): every other thread blocks SIGTERM and SIGINT."""
    server = start_redis(tmp_path / "redis")
    process = started([command], server.url, tmp_path / "home", tmp_path / f"{command}.log")
    try:
        queues = redis.Redis(port=server.port, db=1)
        if command == "worker":
            wait_for(lambda: queues.scard("rq:workers") == 1, "the worker registered")
        else:
            wait_for(lambda: queues.exists(cron_lease_key()) == 1, "the cron holding its lease")
        time.sleep(0.5)  # its threads started: the schedulers' and RQ's pubsub
        stops = (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGINT - 1))
        tasks = {int(t.name): _blocked(t) for t in Path(f"/proc/{process.pid}/task").iterdir()}
        assert len(tasks) >= 2, tasks  # OpenBLAS's at least
        assert tasks.pop(process.pid) & stops == 0  # the main thread
        assert all(mask & stops == stops for mask in tasks.values()), tasks
        process.send_signal(signal.SIGTERM)
        _ended_within(process, 10, tmp_path / f"{command}.log")
        queues.close()
    finally:
        if process.poll() is None:  # a failed assertion: not left running
            process.kill()
            process.wait()
        server.stop()


def test_sigusr1_writes_where_every_thread_of_a_running_worker_is_and_it_goes_on(
    tmp_path: Path,
) -> None:
    server = start_redis(tmp_path / "redis")
    log = tmp_path / "worker.log"
    process = started(["worker"], server.url, tmp_path / "home", log)
    try:
        queues = redis.Redis(port=server.port, db=1)
        wait_for(lambda: queues.scard("rq:workers") == 1, "the worker registered")
        process.send_signal(signal.SIGUSR1)
        # Until the stack of the retries' thread is written, a thread of its own: every
        # thread's (the first lines of the dump come before the last ones are written)
        wait_for(lambda: "in run_retries" in log.read_text(), "every thread's stack written")
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        _ended_within(process, 10, log)
        queues.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        server.stop()


def _ended_within(process: subprocess.Popen[bytes], seconds: float, log: Path) -> None:
    """Else fail with where each of its threads was (SIGUSR1: api/logs.py) and its log."""
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        tail = log.read_text(errors="replace")[-6000:]
        raise AssertionError(
            f"still running {seconds} s after SIGTERM; its log ends:\n{tail}"
        ) from None
