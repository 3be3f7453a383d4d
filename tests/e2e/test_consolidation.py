"""Nightly sleep consolidation with real processes: the cron of `up` fires it, the fold
applies it, replay reproduces it, and the audit shows what it did to a link."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from assocmem.api.client import Client
from tests.e2e.pipeline import Pipeline, cli, cli_json

YEAR = 365 * 86_400


def test_a_consolidation_scheduled_seconds_ahead_runs_from_the_cron_and_replays_exactly(
    tmp_path: Path,
) -> None:
    night = datetime.now(UTC) + timedelta(seconds=12)
    schedule = f"{night.minute} {night.hour} * * * {night.second}"
    settings = {
        "ASSOCMEM_CONSOLIDATE_AT": schedule,
        "ASSOCMEM_TZ": "UTC",
        "ASSOCMEM_WRITTEN_HALF_LIFE_DAYS": "180",
    }
    up = Pipeline(tmp_path / "data", settings)
    try:
        with Client(up.url, api_key=up.key) as client:
            two_years_ago = time.time() - 2 * YEAR
            for n in range(6):
                client.write(
                    f"timeout with jitter, case {n}", ["timeout", "jitter"], ts=two_years_ago
                )
            client.write("retry a timeout with backoff", ["timeout", "backoff", "retry"])
        deadline = time.monotonic() + 60
        while True:
            changes = cli_json("audit", "link", "timeout", "jitter", url=up.url)["changes"]
            if changes[-1]["type"] == "links.consolidated":
                break
            assert time.monotonic() < deadline, "no consolidation from the cron within 60 s"
            time.sleep(0.5)
        decision = changes[-1]
        assert decision["agent"] == "consolidation"
        # Six co-occurrences 640 days past the 90-day window, halved every 180 days: 0.5,
        # kept at 2 so that a read still follows the link.
        assert (decision["written"], decision["count"]) == (-4, 2)
        link = cli_json("audit", "link", "timeout", "backoff", url=up.url)["changes"]
        assert [c["type"] for c in link] == ["memory.written"]  # a recent link is left alone
        replayed = cli("replay", "--verify", url=up.url)
        assert "matches" in replayed.stdout
        assert cli_json("consolidate", "--now", "--dry-run", url=up.url)["state"] == "finished"
    finally:
        up.stop()
