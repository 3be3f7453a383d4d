"""Nothing is lost or counted twice when the workers and the API are SIGKILLed while events
are appended: clients retry by idempotency key, `up` restarts what died, and at the end the
served state is the fold of the log from zero."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest

from assocmem.api.client import Client
from assocmem.api.errors import ApiError, BadRequest
from assocmem.api.ops.run_file import RunInfo, read_run_file
from assocmem.engine.position import Position
from assocmem.workers.jobs.job_list import list_jobs
from assocmem.workers.runtime.services import Runtime
from tests.e2e.pipeline import Pipeline, cli_json, runtime_of

NOTES = 100_000
BATCH = 500
FEEDBACK_EVERY = 10
"""Batches between two feedback events (each rates a few notes of the last batch)."""
WORKER_KILLS = 20
API_KILLS = 5
WORDS = [f"{a}{b}" for a in ("red", "blu", "gre", "yel", "bla", "whi") for b in "aeiou"] + [
    "timeout", "retry", "deploy", "cache", "queue", "billing", "schema", "index", "lock", "shard",
]  # fmt: skip


def note(i: int, rng: random.Random) -> dict[str, object]:
    words = " ".join(rng.sample(WORDS, 4))
    return {"text": f"note {i} about {words}", "ts": 1_700_000_000.0 + i, "key": f"note-{i}"}


def retried(call, *args, **kwargs):  # type: ignore[no-untyped-def]
    """`call` until the API answers: a connection refused, a reset or a 5xx is retried with the
    same idempotency keys, a refusal (4xx) is a failure of the test."""
    deadline = time.monotonic() + 120
    while True:
        try:
            return call(*args, **kwargs)
        except BadRequest:
            raise
        except ApiError:
            assert time.monotonic() < deadline, "the API did not come back within 120 s"
            time.sleep(0.2)


class Killer(threading.Thread):
    """SIGKILLs a worker or the API at random moments, waiting each time until `up` has
    restarted it (its pid in the run file changes)."""

    def __init__(self, up: Pipeline, seed: int) -> None:
        super().__init__(daemon=True)
        self.up = up
        self.rng = random.Random(seed)
        self.targets = ["worker"] * WORKER_KILLS + ["api"] * API_KILLS
        self.rng.shuffle(self.targets)
        self.killed: list[str] = []
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            for target in self.targets:
                time.sleep(self.rng.uniform(0.3, 2.0))
                info = read_run_file(self.up.home)
                assert info is not None
                pid = info.api_pid if target == "api" else self.rng.choice(info.worker_pids)
                os.kill(pid, signal.SIGKILL)
                self.killed.append(target)
                self._wait_restarted(pid)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            self.failure = exc

    def _wait_restarted(self, pid: int) -> None:
        deadline = time.monotonic() + 60
        while True:
            info = read_run_file(self.up.home)
            if info is not None and pid not in (info.api_pid, *info.worker_pids):
                return
            assert time.monotonic() < deadline, f"`up` did not restart pid {pid}"
            time.sleep(0.1)


def wait_for_snapshot_at(info: RunInfo, position: str, logs: Path) -> None:
    runtime = runtime_of(info)
    try:
        deadline = time.monotonic() + 300
        while runtime.snapshots.latest_position("default") != Position.parse(position):
            assert time.monotonic() < deadline, (
                f"the workers never published the last snapshot; at "
                f"{runtime.snapshots.latest_position('default')}, jobs "
                f"{job_states(runtime)}\n{worker_log_tail(logs)}"
            )
            time.sleep(0.5)
    finally:
        runtime.close()


def job_states(runtime: Runtime) -> list[tuple[str, str, int | None, str | None]]:
    return [(j.id, j.state, j.retries_left, j.error) for j in list_jobs(runtime)]


def worker_log_tail(logs: Path, lines: int = 60) -> str:
    """What the workers logged last, lines about heartbeats and registries left out."""
    noise = ("heartbeat", "cleaning", "subscrib", "Listening")
    kept = [
        line
        for path in sorted(logs.glob("worker-*.log"))
        for line in path.read_text(errors="replace").splitlines()
        if not any(word in line for word in noise)
    ]
    return "\n".join(kept[-lines:])


@pytest.mark.slow
def test_kill_9_of_workers_and_api_while_appending_loses_nothing_and_counts_nothing_twice(
    tmp_path: Path,
) -> None:
    up = Pipeline(
        tmp_path / "data",
        {"ASSOCMEM_SNAPSHOT_EVERY": "5000", "ASSOCMEM_FOLD_INTERVAL": "0.5"},
    )
    rng = random.Random(16)
    killer = Killer(up, seed=9)
    try:
        with Client(up.url, timeout=120, api_key=up.key) as client:
            killer.start()
            last = ""
            feedbacks = 0
            for start in range(0, NOTES, BATCH):
                items = [note(i, rng) for i in range(start, start + BATCH)]
                written = retried(client.write_many, items)
                last = written[-1]["position"]
                if (start // BATCH) % FEEDBACK_EVERY == 0:
                    rated = [w["position"] for w in written[:3]]
                    answer = retried(
                        client.feedback, rated, 1.0, concepts=["timeout"], key=f"fb-{start}"
                    )
                    last, feedbacks = answer["position"], feedbacks + 1
            killer.join(timeout=300)
            assert killer.failure is None, killer.failure
            assert len(killer.killed) == WORKER_KILLS + API_KILLS, "the appends ended first"

            health = retried(client.health)
            assert health["log_length"] == NOTES + feedbacks  # every event appended once
            info = read_run_file(up.home)
            assert info is not None
            wait_for_snapshot_at(info, last, up.home / "logs")
            served = retried(client.state)
            assert served["position"] == last
            assert served["memories"] == NOTES
        replay = cli_json("replay", "--until", last, url=up.url)
        assert replay["matches"], replay["difference"]  # the last snapshot + tail == from zero
        assert replay["replayed_hash"] == served["hash"]  # and so is the API's own state
    finally:
        up.stop()
