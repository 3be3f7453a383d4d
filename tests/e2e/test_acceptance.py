"""The three checks of the walking skeleton, through real processes and the CLI."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.pipeline import Pipeline, cli, cli_json

NOTES = [
    ("a b note one", "a,b"),
    ("a b note two", "a,b"),
    ("b c note", "b,c"),
    ("c d note", "c,d"),
    ("a e note", "a,e"),
    ("e g note", "e,g"),
]


READ = ("--no-record", "--now", "2000000000")
"""Reads in these checks count no accesses and rank at one fixed time, so equal states read equal."""


def items(read: dict) -> dict[str, dict]:
    return {item["text"]: item for item in read["items"]}


def links(item: dict) -> list[dict]:
    return [
        {k: v[k] for k in ("concept", "from", "weight", "count", "learned")} for v in item["via"]
    ]


def expanded(read: dict) -> list[str]:
    return [e["concept"] for e in read["expanded_concepts"]]


def wait_for_snapshot(up: Pipeline, position: str, timeout: float = 30.0) -> None:
    runtime = up.runtime()
    deadline = time.monotonic() + timeout
    while str(runtime.snapshots.latest_position("default")) != position:
        assert time.monotonic() < deadline, f"no snapshot reached {position}"
        time.sleep(0.1)
    runtime.close()


def test_taught_links_survive_a_crash_of_every_process(tmp_path: Path) -> None:
    home = tmp_path / "data"
    up = Pipeline(home)
    try:
        assert up.banner.startswith(f"assocmem serving {up.url}")
        ids = {
            text: cli_json("write", text, "--concepts", concepts, url=up.url)["id"]
            for text, concepts in NOTES
        }

        # 1. A read of A returns a note that never names A, with the link that brought it.
        before = cli_json("read", "--concepts", "a", *READ, url=up.url)
        found = items(before)
        assert found["b c note"]["source"] == "association"
        assert links(found["b c note"]) == [
            {"concept": "b", "from": "a", "weight": 2.0, "count": 2, "learned": 0.0}
        ]
        assert expanded(before) == ["b"]
        assert "e g note" not in found and "c d note" not in found
        human = cli("read", "--concepts", "a", *READ, url=up.url).stdout
        assert "via a -> b  weight 2 (written 2, taught 0, ppmi 1.07)" in human

        # 2. Helpful feedback changes the expansion and brings a note through a taught link.
        fb = cli_json(
            "feedback", "--ids", ids["b c note"], "--outcome", "1", "--concepts", "a", url=up.url
        )
        after = cli_json("read", "--concepts", "a", *READ, url=up.url)
        assert expanded(after) == ["b", "c"]
        taught = items(after)["c d note"]
        assert taught["source"] == "association"
        assert links(taught) == [
            {"concept": "c", "from": "a", "weight": 1.0, "count": 0, "learned": 1.0}
        ]
        wait_for_snapshot(up, fb["position"])
    finally:
        up.crash()

    # 3. Everything was killed; a new `up` on the same directory serves the taught state.
    again = Pipeline(home)
    try:
        assert cli_json("read", "--concepts", "a", *READ, url=again.url) == after
        control = cli_json("read", "--concepts", "a", "--without-feedback", *READ, url=again.url)
        assert (control["expanded_concepts"], control["items"]) == (
            before["expanded_concepts"],
            before["items"],
        )
        assert (
            cli_json("read", "--concepts", "a", "--as-of", before["position"], *READ, url=again.url)
            == before
        )
        for read in (after, control):
            assert "e g note" not in items(read)
    finally:
        again.stop()
    assert not (home / "run.json").exists()


def test_cli_errors_are_clear_and_nothing_reaches_the_log(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        bad = cli(
            "feedback",
            "--ids",
            "1-0",
            "--outcome",
            "1.5",
            "--concepts",
            "a",
            url=up.url,
            check=False,
        )
        assert bad.returncode != 0
        assert "outcome 1.5 is out of range: expected -1.0 to 1.0" in bad.stderr
        empty = cli("write", "  ", url=up.url, check=False)
        assert "text '  ' is empty" in empty.stderr
        far = cli("graph", "a", "--hops", "4", url=up.url, check=False)
        assert "hops 4 is out of range" in far.stderr
        ahead = cli("chain", "a", "b", "--after", "99999999999999-0", url=up.url, check=False)
        assert "past the end of the log" in ahead.stderr
        assert cli_json("state", url=up.url)["memories"] == 0
        second = cli("up", "--data", str(up.home), url=up.url, check=False)
        assert "already runs" in second.stderr
        down = cli("read", "--concepts", "a", url="http://127.0.0.1:9", check=False)
        assert "not reachable at http://127.0.0.1:9" in down.stderr
    finally:
        up.stop()


def test_people_read_the_words_agents_wrote_and_programs_get_the_keys(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        for _ in range(2):
            cli("write", "We retry failed calls", url=up.url)
        cli("write", "Always retry with backoff", url=up.url)
        read = cli("read", "--concepts", "calls", *READ, url=up.url).stdout
        assert "retry (" in read.splitlines()[0] and "via calls -> retry" in read
        assert "retri" not in read
        asked = cli_json("read", "--concepts", "retry", *READ, url=up.url)
        assert asked["query_concepts"] == [{"concept": "retry", "key": "retri"}]
        via = cli_json("read", "--concepts", "calls", *READ, url=up.url)["items"]
        assert {(v["concept"], v["key"]) for item in via for v in item["via"]} >= {
            ("retry", "retri")
        }
        graph = cli("graph", "retry", url=up.url).stdout
        assert "around: retry" in graph and "retry -- " in graph and "retri" not in graph
        edges = cli_json("graph", "retry", url=up.url)["edges"]
        assert {e["source"] for e in edges} == {"retry"} and {e["source_key"] for e in edges} == {
            "retri"
        }
        memory = via[0]["id"]
        shown = cli("get", memory, url=up.url).stdout
        assert shown.startswith(f"{memory}  memory by ") and "concepts: " in shown
        assert "retry" in shown and "retri" not in shown
        assert cli_json("get", memory, url=up.url)["id"] == memory
        missing = cli("get", "1-0", url=up.url, check=False)
        assert missing.returncode != 0 and "1-0" in missing.stderr
        page = cli("list", "--limit", "2", url=up.url).stdout.splitlines()
        assert page[0].endswith("Always retry with backoff") and len(page) == 3
        assert page[2].startswith("more: assocmem list --cursor ")
        rest = cli_json("list", "--cursor", page[2].split()[-1], url=up.url)
        assert [m["text"] for m in rest["memories"]] == ["We retry failed calls"]
        assert rest["cursor"] is None
        tagged = cli_json(
            "write",
            "The pool drains at midnight",
            "--metadata",
            "team=ops",
            "--metadata",
            "ticket=7",
            url=up.url,
        )
        shown = cli("get", tagged["id"], url=up.url).stdout
        assert "metadata: team=ops, ticket=7" in shown
        found = cli_json("list", "--metadata", "ticket=7", url=up.url)["memories"]
        assert [m["id"] for m in found] == [tagged["id"]] and found[0]["metadata"]["ticket"] == 7
        newer = cli("update", memory, "Always retry with jittered backoff", url=up.url).stdout
        assert newer.endswith(f"supersedes {memory}\n")
        assert cli_json("get", memory, url=up.url)["superseded_by"] == newer.split()[0]
    finally:
        up.stop()


TURNS = [
    ("I booked the flight to Lisbon", "flight,lisbon,booked"),
    ("window seat, row 12", "seat,window,aisle"),
]


def test_a_rated_turn_after_a_match_is_taught_audited_and_kept_after_a_crash(
    tmp_path: Path,
) -> None:
    """Episodic context end to end: the reply written after a match comes beside it; a
    rating of the reply for a question the match answered teaches the memory-to-memory link
    (a read by another word of the match shows it), audit says which rating taught it, and
    a new `up` after every process was killed serves the same."""
    home = tmp_path / "data"
    up = Pipeline(home)
    try:
        match, reply = (
            cli_json("write", text, "--concepts", concepts, url=up.url)["id"]
            for text, concepts in TURNS
        )
        first = items(cli_json("read", "--concepts", "lisbon", *READ, url=up.url))
        seat = first["window seat, row 12"]
        assert seat["beside"] == {"id": match, "written": "after", "taught": 0.0}
        fb = cli_json(
            "feedback", "--ids", reply, "--outcome", "1", "--concepts", "flight", url=up.url
        )
        after = cli_json("read", "--concepts", "lisbon", *READ, url=up.url)
        taught = items(after)["window seat, row 12"]
        assert taught["beside"] == {"id": match, "written": "after", "taught": 1.0}
        assert taught["score"] > seat["score"]
        assert (
            "written after " + match + " (taught +1)"
            in cli("read", "--concepts", "lisbon", *READ, url=up.url).stdout
        )
        audit = cli_json("audit", "memory", reply, url=up.url)
        (rating,) = [e for e in audit["events"] if e["type"] == "feedback.given"]
        assert rating["position"] == fb["position"]
        assert rating["detail"]["links"] == [{"from": match, "written": "after", "taught": 1.0}]
        wait_for_snapshot(up, fb["position"])
    finally:
        up.crash()

    again = Pipeline(home)
    try:
        assert cli_json("read", "--concepts", "lisbon", *READ, url=again.url) == after
        assert cli_json("audit", "memory", reply, url=again.url) == audit
        assert cli_json("replay", "--verify", url=again.url)["matches"]
    finally:
        again.stop()


def test_cli_writes_metadata_and_filters_reads_and_listings_by_it(tmp_path: Path) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        for text, priority in (("billing timeout at night", "1"), ("billing timeout at noon", "4")):
            cli("write", text, "--metadata", f"priority={priority}", url=up.url)
        found = cli_json("read", "billing timeout", "--filter", "priority>=2", url=up.url)
        assert [i["text"] for i in found["items"]] == ["billing timeout at noon"]
        listed = cli("list", "--filter", "priority<2", url=up.url).stdout
        assert "billing timeout at night" in listed and "noon" not in listed
        refused = cli("read", "billing", "--filter", "priority", url=up.url, check=False)
        assert refused.returncode == 2 and "is not KEY=VALUE" in refused.stderr
        # the API's log says it started (it writes no line per request)
        assert (
            "Application startup complete" in (tmp_path / "data" / "logs" / "api.log").read_text()
        )
    finally:
        up.stop()
