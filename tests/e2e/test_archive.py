"""An archive pass with real processes: old entries leave the stream for compressed
segments, and replay, `as_of` and audits read on as before."""

from __future__ import annotations

import time
from pathlib import Path

from assocmem.api.client import Client
from assocmem.workers.store.redis.connect import data_client
from tests.e2e.pipeline import Pipeline, cli, cli_json


def test_an_archive_pass_moves_old_entries_and_history_reads_through_it(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data", {"ASSOCMEM_RETENTION_DAYS": "0.00001"})  # under a second
    try:
        first = cli_json(
            "write", "the billing job timed out", "--concepts", "billing,timeout", url=up.url
        )
        cli("write", "billing retries with backoff", "--concepts", "billing,backoff", url=up.url)
        middle = cli_json("state", url=up.url)
        cli("write", "the last note", "--concepts", "last,note", url=up.url)
        time.sleep(1.5)  # older than the retention window; ASSOCMEM_SNAPSHOT_EVERY=1 snapshots them
        audit_before = cli_json("audit", "link", "billing", "timeout", url=up.url)
        job = cli_json("archive", "--now", url=up.url)
        assert job["result"]["entries"] >= 2 and job["result"]["segments"] >= 1
        stream = data_client(up.info.redis_url).xrange("am:{default}:log")
        assert first["id"].encode() not in [position for position, _ in stream]
        listing = cli_json("archive", url=up.url)
        assert listing["segments"][0]["first"] == first["id"]
        assert cli_json("replay", "--verify", url=up.url)["matches"]
        assert (
            cli_json("state", "--as-of", middle["position"], url=up.url)["hash"] == middle["hash"]
        )
        assert cli_json("audit", "link", "billing", "timeout", url=up.url) == audit_before
        with Client(up.url, api_key=up.key) as client:
            assert client.health()["log_length"] == 3  # archived entries still count
    finally:
        up.stop()
