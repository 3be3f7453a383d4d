"""Drives real `assocmem` processes: `up` on a data directory, and CLI commands against it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import RunInfo, read_run_file
from assocmem.api.ops.spawn import spawn_up
from assocmem.workers.runtime.redis_server import is_alive
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import load_settings

ON_CLUSTER = "ASSOCMEM_TEST_CLUSTER"
"""Masters of the cluster every pipeline runs on, where tests/conftest.py's --redis-cluster
sets it."""

KEYS: dict[str, str] = {}
"""The operator key of each running pipeline, by URL: what `cli` sends to it."""


def cli(*args: str, url: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSOCMEM_URL": url}
    if url in KEYS:
        env["ASSOCMEM_API_KEY"] = KEYS[url]
    result = subprocess.run(
        [sys.executable, "-m", "assocmem.api.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"assocmem {' '.join(args)} failed ({result.returncode}): {result.stderr}"
        )
    return result


def cli_json(*args: str, url: str) -> Any:
    return json.loads(cli(*args, "--json", url=url).stdout)


WALK_THROUGH = [
    ("a b note one", "a,b"),
    ("a b note two", "a,b"),
    ("b c note", "b,c"),
    ("c d note", "c,d"),
    ("a e note", "a,e"),
]
"""The README's walk through: five notes; `walk_through` rates "b c note" for `a`."""


def walk_through(url: str) -> dict[str, str]:
    """The README's walk through against `url`: each note's id by its text, and the
    position of the rating that teaches the link a-c (`feedback`)."""
    ids = {
        text: cli_json("write", text, "--concepts", concepts, url=url)["id"]
        for text, concepts in WALK_THROUGH
    }
    taught = cli_json(
        "feedback", "--ids", ids["b c note"], "--outcome", "1", "--concepts", "a", url=url
    )
    ids["feedback"] = taught["position"]
    return ids


class Pipeline:
    """`assocmem up` as a subprocess; `info` is its run file once it serves."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        defaults = {
            "ASSOCMEM_FOLD_INTERVAL": "0.2",
            "ASSOCMEM_SNAPSHOT_EVERY": "1",
            # The nightly 02:30 would append a consolidation to a test running then; the
            # tests of the cron name their own schedule.
            "ASSOCMEM_CONSOLIDATE_AT": "off",
        }
        if masters := os.environ.get(ON_CLUSTER):  # pytest --redis-cluster
            defaults["ASSOCMEM_CLUSTER"] = masters
        self.process, self.banner = spawn_up(home, {**defaults, **(env or {})})
        info = read_run_file(home)
        assert info is not None, "up printed its URL but wrote no run file"
        self.info: RunInfo = info
        key = read_key_file(home)
        assert key is not None, "up made no operator key"
        self.key = KEYS[info.url] = key

    @property
    def url(self) -> str:
        return self.info.url

    def runtime(self) -> Runtime:
        """A connection to the pipeline's data and queues, as its workers make."""
        return runtime_of(self.info)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(60)

    def crash(self) -> None:
        """SIGKILL `up`, the API and the workers; then stop the embedded Redis (or cluster)."""
        pids = [self.info.up_pid, self.info.api_pid, *self.info.worker_pids, self.info.cron_pid]
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        self.process.wait(10)
        for pid in [self.info.redis_pid, *self.info.cluster_pids]:
            if pid:
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
        deadline = time.monotonic() + 30
        while any(is_alive(pid) for pid in pids) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            time.sleep(0.05)
        assert not any(is_alive(pid) for pid in pids), "a process survived the crash"


def runtime_of(info: RunInfo) -> Runtime:
    env = {"REDIS_URL": info.redis_url}
    if info.queue_url:  # up --cluster: the queues are in the embedded Redis
        env["ASSOCMEM_QUEUE_URL"] = info.queue_url
    return Runtime.connect(load_settings(env))
