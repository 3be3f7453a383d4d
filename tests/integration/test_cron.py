"""The nightly cron on a real Redis: one lease holder fires, a night is queued once per
tenant however many crons run, and the queued consolidation appends its decision."""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import redis
from fastapi.testclient import TestClient

from assocmem.api.http.app import create_app
from assocmem.engine.events.envelope import Event
from assocmem.engine.position import Position
from assocmem.workers.jobs.consolidation_job import AGENT, consolidate, enqueue_consolidation
from assocmem.workers.jobs.cron import Cron, Lease, run_cron
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.jobs.job_list import job_info
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import ConsolidationSettings, Settings, load_settings
from assocmem.workers.state.rebuild import events_of, rebuild
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE, cron_last_key
from tests.api_keys import bearer, operator_key
from tests.stores import note, work, write


def test_one_lease_holder_at_a_time_and_a_standby_takes_over_when_it_lapses(
    redis_url: str,
) -> None:
    connection = redis.Redis.from_url(redis_url)
    first, second = Lease(connection, "lease", 1), Lease(connection, "lease", 1)
    assert first.hold() and not second.hold()
    assert first.hold()  # renewed, still ours
    time.sleep(1.2)  # the holder stopped renewing (it died)
    assert second.hold() and not first.hold()
    second.release()
    assert first.hold()
    connection.close()


def test_two_crons_queue_a_night_once_per_tenant_consolidation_archive_and_expiry(
    runtime: Runtime,
) -> None:
    write(runtime, ["a", "b"])
    write(runtime, ["c", "d"], tenant="other")
    runtime.settings = dataclasses.replace(
        runtime.settings, consolidation=ConsolidationSettings(at="0 3 * * *")
    )
    crons = [Cron(runtime), Cron(runtime)]
    zone = crons[0].zone
    evening = datetime(2026, 3, 1, 22, 0, tzinfo=zone)
    assert [cron.tick(evening) for cron in crons] == [[], []]  # the first start: nothing due
    assert crons[0].holding and not crons[1].holding
    night = datetime(2026, 3, 2, 3, 0, tzinfo=zone)
    queued = []
    for minutes in (0, 1, 5, 60):  # every tick of both crons, through the night
        for cron in crons:
            queued += cron.tick(night + timedelta(minutes=minutes))
    assert (
        sorted(queued)
        == sorted(runtime.queue(MAINTENANCE_QUEUE).job_ids)
        == sorted(
            f"{job}-{tenant}-20260302T0300"
            for job in ("consolidate", "archive", "expire")
            for tenant in ("default", "other")
        )
    )
    crons[0].lease.release()  # the holder died: the standby fires the next night
    next_night = night + timedelta(days=1, minutes=1)
    assert crons[1].tick(next_night) != [] and crons[1].holding


def test_a_cron_with_consolidation_off_queues_no_night(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    off = load_settings({"ASSOCMEM_CONSOLIDATE_AT": "Off"}).consolidation
    runtime.settings = dataclasses.replace(runtime.settings, consolidation=off)
    assert runtime.queue_connection is not None
    week_ago = datetime.now(UTC) - timedelta(days=7)
    runtime.queue_connection.set(cron_last_key(), week_ago.timestamp())  # nights are due
    cron = Cron(runtime)
    assert cron.tick(datetime.now(cron.zone)) == []
    assert runtime.queue(MAINTENANCE_QUEUE).count == 0
    stop = threading.Event()
    running = threading.Thread(target=run_cron, args=(runtime, stop, 0.05), daemon=True)
    running.start()
    stop.set()
    running.join(5)
    assert not running.is_alive(), "the cron did not stop"


def test_a_consolidation_job_appends_its_decision_and_reports_it(runtime: Runtime) -> None:
    # The same note twice: consolidation merges the older into the newer.
    runtime.log.append("default", [note(["deploy", "fix"]), note(["deploy", "fix"])])
    enqueue_consolidation(runtime, "default", "consolidate-now")
    enqueue_consolidation(runtime, "default", "consolidate-now")  # the same id: runs once
    work(runtime)
    job = job_info(runtime, "consolidate-now")
    assert job.state == "finished" and job.progress == {"phase": "deciding", "done": 1.0}
    assert job.result is not None and job.result["effect"]["memories_merged"] == 1
    events = [e for e in events_of(runtime.log, "default") if e.agent == AGENT]
    assert [str(e.position) for e in events] == [job.result["appended_at"]]
    state = rebuild(runtime.log, runtime.snapshots, "default")
    first = state.rows[0]
    assert first.superseded_by == state.rows[1].id
    assert Position.parse(job.result["decided_at"]) < events[0].position


def test_a_taught_half_life_fades_a_rated_neighbour_s_link_and_its_audit_says_so(
    settings: Settings,
) -> None:
    """Two years after a rating taught the link from a match to the note written after it,
    a night with a taught half-life of a year leaves 0.5 ** ((730 - 90) / 365) of it, and
    the memory's audit through HTTP names that night and what it left."""
    night = dataclasses.replace(settings.consolidation, taught_half_life_days=365.0)
    settings = dataclasses.replace(settings, consolidation=night)
    runtime = Runtime.connect(settings)
    try:
        first, second = write(runtime, ["flight", "lisbon"], ["seat", "window"])
        rating = {"memory_ids": [str(second)], "outcome": 1.0, "concepts": ["flight"]}
        runtime.log.append("default", [Event("feedback.given", "default", "agent", 1.0, rating)])
        report = consolidate(runtime, "default", clock=lambda: time.time() + 730 * 86_400.0)
        assert report.effect.taught_decayed == 3  # flight -- seat, flight -- window, 1 -> 2
        state = rebuild(runtime.log, runtime.snapshots, "default")
        left = 0.5 ** ((730 - 90) / 365)
        assert state.memory_links[(0, 1)][0] == pytest.approx(left, rel=1e-3)
        with TestClient(create_app(settings), headers=bearer(operator_key(settings))) as http:
            events = http.get(f"/v1/audit/memory/{second}").json()["events"]
        assert [e["type"] for e in events] == [
            "memory.written",
            "feedback.given",
            "links.consolidated",
        ]
        assert events[-1]["position"] == report.appended_at
        faded = events[-1]["detail"]["links"]
        assert faded == [{"from": str(first), "written": "after", "taught": faded[0]["taught"]}]
        assert faded[0]["taught"] == state.memory_links[(0, 1)][0]
    finally:
        runtime.close()


def test_a_consolidation_decides_on_the_state_its_worker_keeps_without_loading_a_snapshot(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(runtime, ["deploy", "fix"])
    fold_and_publish(runtime, "default", force=True)  # the worker keeps the state it folded
    write(runtime, ["deploy", "fix"])
    loads: list[object] = []
    monkeypatch.setattr(
        "assocmem.workers.state.rebuild.load_snapshot", lambda *a, **k: loads.append(a)
    )
    report = consolidate(runtime, "default", dry_run=True)
    assert loads == []
    assert report.effect.memories_merged == 1  # the note folded since the snapshot counts
    assert Position.parse(report.decided_at) == runtime.log.last_position("default")


def test_a_dry_run_appends_nothing(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    length = runtime.log.length("default")
    enqueue_consolidation(runtime, "default", "dry", dry_run=True)
    work(runtime)
    job = job_info(runtime, "dry")
    assert job.result is not None and job.result["appended_at"] is None
    assert runtime.log.length("default") == length
