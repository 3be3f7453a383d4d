"""What the CLI prints for answers that may be long."""

from __future__ import annotations

from assocmem.api.cli import render
from assocmem.api.cli.plot import steps


def test_a_resend_of_many_dead_letters_counts_them_and_lists_the_first_of_each_outcome() -> None:
    unreadable = [
        {"position": f"{n}-0", "appended": None, "reason": "not JSON"} for n in range(1, 26)
    ]
    appended = [{"position": "30-0", "appended": "40-0", "reason": None}]
    lines = render.resent({"resent": unreadable + appended}).splitlines()
    assert lines[0] == "1 appended again, 25 left unreadable"
    assert lines[1] == "30-0  appended again at 40-0"
    assert lines[2:22] == [f"{n}-0  still unreadable: not JSON" for n in range(1, 21)]
    assert lines[22:] == ["... and 5 more still unreadable (--json)"]
    assert render.resent({"resent": []}) == "no dead letters"


def test_each_recalled_memory_is_one_line_however_its_text_is_laid_out() -> None:
    commit = "t0021: fix flaky test\n\nt0021.15 creates files, adds them to the index, and commits them all at once"
    item = {"source": "direct", "id": "5-0", "score": 0.5, "text": commit, "via": []}
    answer = {
        "position": "9-0",
        "depth": "standard",
        "query_concepts": [{"concept": "flaky"}],
        "expanded_concepts": [],
        "matches": [],
        "chains": [],
        "items": [item, {**item, "id": "6-0", "text": "short note"}],
    }
    lines = render.recalled(answer).splitlines()
    assert len(lines) == 3
    shown = lines[1].split("0.500  ")[1]
    assert shown.startswith("t0021: fix flaky test t0021.15 creates files,") and shown[-1] == "…"
    assert len(shown) == render.SNIPPET
    assert lines[2].endswith("0.500  short note")


def test_a_link_audit_shows_what_a_consolidation_took_off_as_a_minus() -> None:
    change = {"ts": 0.0, "agent": "operator", "type": "memory.written", "taught": 0.0}
    audit = {
        "source": "a",
        "target": "e",
        "weight": 0,
        "count": 0,
        "learned": 0.0,
        "written_share": 0.0,
        "changes": [
            {**change, "position": "1-0", "written": 1, "weight": 1},
            {
                **change,
                "position": "2-0",
                "written": -1,
                "weight": 0,
                "agent": "consolidation",
                "type": "links.consolidated",
            },
        ],
    }
    lines = render.link_audit(audit).splitlines()
    assert lines[0] == "a -- e  weight 0 (written 0, taught 0)"
    assert " written +1 " in lines[1] and " written -1 " in lines[2]
    assert lines[1].index(" written ") == lines[2].index(" written ")  # columns aligned


def test_a_memory_audit_says_what_a_consolidation_left_of_a_taught_link_not_its_rule() -> None:
    event = {"ts": 0.0, "agent": "consolidation", "type": "links.consolidated"}
    rule = {"at": 0.0, "window_days": 90.0, "taught_half_life_days": 365.0}
    links = [{"from": "1-0", "written": "after", "taught": 0.25}]
    audit = {
        "id": "2-0",
        "events": [
            {**event, "position": "9-0", "detail": {"rule": rule, "links": links}},
            {**event, "position": "9-1", "detail": {"rule": rule, "superseded_by": "3-0"}},
        ],
    }
    lines = render.memory_audit(audit).splitlines()
    assert lines[1].endswith("links.consolidated     link from 1-0 faded to +0.25")
    assert lines[2].endswith("links.consolidated     superseded_by 3-0")


def test_a_plotted_link_holds_its_last_weight_past_its_last_change() -> None:
    written = {"agent": "operator", "type": "memory.written", "taught": 0.0, "learned": 0.0}
    changes = [
        {**written, "ts": 100.0, "count": 1, "weight": 1.0},
        {**written, "ts": 300.0, "count": 0, "weight": 0.0, "type": "links.consolidated"},
    ]
    times, counts, taught, weights = steps(changes)
    assert weights == [1.0, 0.0, 0.0] and counts == [1, 0, 0] and taught == [0.0, 0.0, 0.0]
    assert (times[2] - times[1]).total_seconds() == 10.0  # a twentieth of the span


def test_an_ingest_sent_again_says_nothing_was_added() -> None:
    first = {"files": 1, "pieces": 1, "units": 3, "already_stored": 0}
    again = {**first, "already_stored": 1}
    partly = {"files": 2, "pieces": 3, "units": 40, "already_stored": 2}

    assert render.ingested(first) == "ingested 1 file in 1 piece: 3 units"
    assert render.ingested(again) == (
        "ingested 1 file in 1 piece: 3 units; all already stored (sent before: nothing added)"
    )
    assert render.ingested(partly) == (
        "ingested 2 files in 3 pieces: 40 units;"
        " 2 of those pieces already stored (sent before: not added again)"
    )


def test_a_graph_names_unknown_concepts_and_a_state_before_the_log_says_so() -> None:
    answer = {
        "position": "0-0",
        "concepts": ["timeout"],
        "unknown_concepts": ["timeout"],
        "hops": 1,
        "edges": [],
    }
    assert render.edges(answer).splitlines() == [
        "at 0-0 (before the first event)  around: timeout  hops 1",
        "  unknown concepts: timeout",
        "  (no links)",
    ]
    assert render.edges({**answer, "position": "7-0", "unknown_concepts": []}).splitlines() == [
        "at 7-0  around: timeout  hops 1",
        "  (no links)",
    ]


def test_a_replay_until_before_the_log_says_it_is_before_the_first_event() -> None:
    answer = {"position": "0-0", "matches": True, "served_hash": "621fff042cdd3cfe00"}
    assert render.verification(answer) == (
        "at 0-0 (before the first event)  replay from zero matches the served state"
        " (hash 621fff042cdd3cfe)"
    )
    assert render.verification({**answer, "position": "7-0"}).startswith("at 7-0  replay")


def test_a_jobs_time_is_printed_to_the_millisecond_whatever_its_last_digits() -> None:
    """The README shows `0.007 s`: a run that took 0.010 s printed `0.01 s` as a float does."""
    report = {"tenant": "default", "dry_run": True, "decided_at": "1-0", "seconds": 0.01}
    first = render.consolidation({"result": report}).splitlines()[0]
    assert first.endswith("dry run: nothing appended; 0.010 s")
    archived = {"entries": 3, "upto": "9-0", "segments": 1, "raw_bytes": 10, "stored_bytes": 5}
    assert render.archive_report({"result": {**archived, "seconds": 1.5}}).endswith("; 1.500 s")
