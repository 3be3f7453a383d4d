"""Auditing what agents learned, through the CLI against a real pipeline."""

from __future__ import annotations

import time
from pathlib import Path

from assocmem.workers.store.redis.connect import data_client
from tests.e2e.pipeline import Pipeline, cli, cli_json


def test_a_link_audit_lists_its_events_a_replay_verifies_and_a_diff_shows_the_taught_link(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        ids = [
            cli_json("write", text, "--concepts", concepts, url=up.url)["id"]
            for text, concepts in [("a b one", "a,b"), ("a b two", "a,b"), ("b c", "b,c")]
        ]
        fb = cli_json("feedback", "--ids", ids[2], "--outcome", "1", "--concepts", "a", url=up.url)
        audit = cli_json("audit", "link", "a", "b", url=up.url)
        assert [
            (c["position"], c["written"], c["taught"], c["weight"]) for c in audit["changes"]
        ] == [
            (ids[0], 1, 0.0, 1.0),
            (ids[1], 1, 0.0, 2.0),
            (fb["position"], 0, 1.0, 3.0),
        ]
        assert audit["written_share"] == round(2 / 3, 6)
        typo = cli("audit", "link", "a", "cc", url=up.url, check=False)
        assert typo.returncode == 1, typo.stderr
        assert "concept 'cc' is unknown: no event up to" in typo.stderr
        assert "'cc'" not in cli("jobs", url=up.url).stdout  # refused, not queued to fail
        plot = tmp_path / "a-b.png"
        shown = cli("audit", "link", "a", "b", "--plot", str(plot), url=up.url).stdout
        assert "a -- b  weight 3 (written 2, taught 1; 67% of it written)" in shown
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5000
        assert f"wrote the plot of the link's weight to {plot.resolve()}" in shown
        svg = tmp_path / "a-b.svg"
        cli("audit", "link", "a", "b", "--plot", str(svg), url=up.url)
        drawn = svg.read_text()
        assert drawn.lstrip().startswith("<?xml") and "<svg" in drawn
        # the time axis reads as times of day and a date, not "53:45.000000"
        assert ".000000" not in drawn and time.strftime("%Y", time.gmtime()) in drawn
        memory = cli_json("audit", "memory", ids[2], url=up.url)
        assert [e["type"] for e in memory["events"]] == ["memory.written", "feedback.given"]
        assert cli("replay", "--verify", url=up.url).returncode == 0
        changes = cli_json("diff", ids[2], fb["position"], url=up.url)
        assert [(c["source"], c["target"]) for c in changes["appeared"]] == [("a", "c")]
        assert [(c["source"], c["target"]) for c in changes["changed"]] == [("a", "b")]
        assert changes["totals"] == {"appeared": 1, "vanished": 0, "changed": 1}
        since = cli("diff", "0-0", fb["position"], "--limit", "1", url=up.url).stdout
        assert "  appeared  ... and 2 more (--limit)" in since  # a -- b, b -- c, a -- c
        today = cli_json("diff", "yesterday", "today", url=up.url)  # all written today
        assert today["totals"] == cli_json("diff", "0-0", fb["position"], url=up.url)["totals"]
        refused = cli("diff", "yesterday", "the day after", url=up.url, check=False)
        assert refused.returncode != 0 and "or a time expression" in refused.stderr
    finally:
        up.stop()


def test_a_malformed_entry_lands_in_dead_letters_and_later_events_are_still_folded(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        cli("write", "before the bad one", url=up.url)
        client = data_client(up.info.redis_url)
        bad = client.xadd("am:{default}:log", {"e": b"{broken"})
        stray = client.xadd("am:{default}:log", {"event": b"not ours"})
        after = cli_json("write", "after the bad one", url=up.url)
        found = cli_json(
            "read", "--concepts", "bad", "--no-record", "--after", after["id"], url=up.url
        )
        assert {i["text"] for i in found["items"]} == {"before the bad one", "after the bad one"}
        deadline = time.monotonic() + 30  # the workers' fold records dead letters
        while len(letters := cli_json("dead-letters", url=up.url)["letters"]) < 2:
            assert time.monotonic() < deadline, "no dead letter recorded"
            time.sleep(0.2)
        assert [(d["position"], d["raw"]) for d in letters] == [
            (bad.decode(), "{broken"),
            (stray.decode(), '{"event":"not ours"}'),
        ]
        assert "is not JSON" in letters[0]["reason"]
        assert letters[1]["reason"] == (
            f"the entry at {stray.decode()} holds 'event', not the one field \"e\" an event"
            " is stored in"
        )
        assert cli_json("dead-letters", url=up.url)["total"] == 2
        oldest = cli("dead-letters", "--limit", "1", url=up.url).stdout.splitlines()
        assert oldest[0].startswith(bad.decode()) and oldest[-1] == "... and 1 more (--limit)"
        resent = cli("dead-letters", "--resend", url=up.url).stdout
        assert resent.splitlines()[0] == "0 appended again, 2 left unreadable"
        assert resent.count("still unreadable") == 2 and "holds 'event'" in resent
    finally:
        up.stop()
