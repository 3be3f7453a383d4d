"""`assocmem export` and `assocmem import` between two real pipelines: into an empty tenant
the positions are kept and the content hash is the source's; into a used one the events
are appended anew; a second import stores nothing twice."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.e2e.pipeline import Pipeline, cli, cli_json


def test_an_export_imported_into_an_empty_tenant_is_the_same_state(tmp_path: Path) -> None:
    source = Pipeline(tmp_path / "source")
    target = Pipeline(tmp_path / "target")
    try:
        first = cli_json("write", "the billing job timed out", url=source.url)
        cli_json("write", "retry the billing job with backoff", url=source.url)
        cli_json("write", "alice keeps her notes here", "--user", "alice", url=source.url)
        cli_json(
            "feedback",
            "--ids",
            first["id"],
            "--outcome",
            "1",
            "--concepts",
            "billing",
            url=source.url,
        )
        cli_json("delete", first["id"], url=source.url)
        before = cli_json("state", url=source.url)

        exported = tmp_path / "events.jsonl"
        said = cli("export", "--out", str(exported), url=source.url)
        lines = [orjson.loads(line) for line in exported.read_bytes().splitlines()]
        assert len(lines) == 5 and "5 events" in said.stdout + said.stderr
        assert [line["event"]["type"] for line in lines][-1] == "memory.deleted"

        done = cli_json("import", str(exported), url=target.url)
        assert done["kept_positions"] and done["appended"] == 5
        after = cli_json("state", url=target.url)
        assert (after["position"], after["hash"]) == (before["position"], before["hash"])
        again = cli_json("import", str(exported), url=target.url)
        assert (again["appended"], again["duplicates"]) == (0, 5)
        assert cli_json("state", url=target.url)["hash"] == before["hash"]

        alices = tmp_path / "alice.jsonl"
        cli("export", "--user", "alice", "--out", str(alices), url=source.url)
        (only,) = [orjson.loads(line) for line in alices.read_bytes().splitlines()]
        assert only["event"]["user"] == "alice"
    finally:
        source.stop()
        target.stop()


def test_an_export_imported_into_a_used_tenant_is_appended_anew_once(tmp_path: Path) -> None:
    source = Pipeline(tmp_path / "source")
    try:
        cli_json("write", "the billing job timed out", url=source.url)
        cli_json("write", "retry the billing job with backoff", url=source.url)
        exported = tmp_path / "events.jsonl"
        cli("export", "--out", str(exported), url=source.url)
        cli_json("write", "a note written after the export", url=source.url)
        done = cli_json("import", str(exported), url=source.url)
        # its own positions hold these very events: nothing is appended
        assert (done["appended"], done["duplicates"]) == (0, 2)
    finally:
        source.stop()
    used = Pipeline(tmp_path / "used")
    try:
        cli_json("write", "a note of the used tenant", url=used.url)
        done = cli_json("import", str(exported), url=used.url)
        assert not done["kept_positions"] and done["appended"] == 2
        assert cli_json("import", str(exported), url=used.url)["duplicates"] == 2
        texts = {m["text"] for m in cli_json("list", url=used.url)["memories"]}
        assert texts == {
            "a note of the used tenant",
            "the billing job timed out",
            "retry the billing job with backoff",
        }
        broken = tmp_path / "broken.jsonl"
        broken.write_bytes(exported.read_bytes() + b'{"position": "1-0"}\n')
        refused = cli("import", str(broken), url=used.url, check=False)
        assert refused.returncode != 0 and "events[2]" in refused.stderr
    finally:
        used.stop()
