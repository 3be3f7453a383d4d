"""Two writer processes at once lose nothing; a retried append is stored once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assocmem.api.client import Client
from tests.e2e.pipeline import Pipeline, cli_json

WRITER = """
import sys
from assocmem.api.client import Client
url, key, name, total, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), 250
with Client(url, api_key=key) as client:
    for start in range(0, total, batch):
        client.write_many([{"text": f"{name} note {i}", "concepts": ["common", name]} for i in range(start, start + batch)])
"""
NOTES_EACH = 2000


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        writers = [
            subprocess.Popen([sys.executable, "-c", WRITER, up.url, up.key, name, str(NOTES_EACH)])
            for name in ("w0", "w1")
        ]
        assert [w.wait(300) for w in writers] == [0, 0]
        with Client(up.url, api_key=up.key) as client:
            assert client.state()["memories"] == 2 * NOTES_EACH
            edges = {
                (e["source"], e["target"]): e["count"] for e in client.graph(["common"])["edges"]
            }
        assert edges == {("common", "w0"): NOTES_EACH, ("common", "w1"): NOTES_EACH}
    finally:
        up.stop()


def test_retried_append_with_the_same_key_is_stored_once(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        first = cli_json(
            "write", "deploy done", "--concepts", "deploy", "--key", "job-42", url=up.url
        )
        retry = cli_json(
            "write", "deploy done", "--concepts", "deploy", "--key", "job-42", url=up.url
        )
        assert (retry["id"], retry["duplicate"], first["duplicate"]) == (first["id"], True, False)
        assert cli_json("state", url=up.url)["memories"] == 1
    finally:
        up.stop()


def test_sigterm_stops_every_process_of_up(tmp_path: Path) -> None:
    from assocmem.workers.runtime.redis_server import is_alive

    up = Pipeline(tmp_path / "data")
    pids = [
        up.info.up_pid,
        up.info.api_pid,
        *up.info.worker_pids,
        up.info.cron_pid,
        up.info.redis_pid,
    ]
    up.stop()
    assert up.process.returncode == 0
    assert not [pid for pid in pids if pid and is_alive(pid)]
    assert not (tmp_path / "data" / "run.json").exists()
