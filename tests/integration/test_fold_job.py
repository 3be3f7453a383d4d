"""The fold job, in memory and on Redis alike (clock injected: no sleeps); the RQ
scheduling around it on Redis."""

from __future__ import annotations

import dataclasses
import gc
import logging
import struct
from collections.abc import Iterator

import orjson
import pytest
import zstandard

from assocmem.engine.position import ZERO, Position
from assocmem.engine.snapshot.codec import (
    SNAPSHOT_FORMAT,
    content_hash,
    dump_state,
    encode_state,
    load_state,
)
from assocmem.engine.snapshot.delta import base_of
from assocmem.workers.jobs import fold_job
from assocmem.workers.jobs.consolidation_job import consolidate
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.jobs.scheduler import enqueue_fold, schedule_folds
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.live import latest_loaded
from assocmem.workers.state.rebuild import Rebuild, rebuild, starting_state
from assocmem.workers.store.ports import Ladder, iter_entries, latest_snapshot
from tests.stores import KINDS, Clock, make_runtime, work, write


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=KINDS)
def anywhere(request: pytest.FixtureRequest, clock: Clock) -> Iterator[Runtime]:
    """A runtime in memory, then one on Redis."""
    yield from make_runtime(request, request.param, clock)


def from_zero_hash(runtime: Runtime) -> str:
    return content_hash(rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True)))


def published_hash(runtime: Runtime) -> str:
    assert latest_snapshot(runtime.snapshots, "default") is not None
    return content_hash(starting_state(runtime.snapshots, "default", None))


def test_fold_publishes_a_snapshot_equal_to_a_fold_from_zero(anywhere: Runtime) -> None:
    write(anywhere, ["a", "b"], ["b", "c"])
    first = fold_and_publish(anywhere, "default")
    positions = write(anywhere, ["c", "d"])
    second = fold_and_publish(anywhere, "default")
    assert first["published"] and second["published"]
    assert anywhere.snapshots.positions("default") == [
        Position.parse(first["position"]),
        positions[-1],
    ]
    assert published_hash(anywhere) == from_zero_hash(anywhere)


def test_a_publish_leaves_the_cyclic_collector_on(anywhere: Runtime) -> None:
    """The fold and the snapshot's encoding pause it; a worker left without one would
    never free a cycle again."""
    write(anywhere, ["a", "b"], ["b", "c"])
    assert fold_and_publish(anywhere, "default", force=True)["published"]
    assert gc.isenabled()


def test_a_second_fold_with_nothing_new_publishes_nothing(anywhere: Runtime) -> None:
    write(anywhere, ["a", "b"])
    fold_and_publish(anywhere, "default")
    assert fold_and_publish(anywhere, "default")["published"] is False
    assert len(anywhere.snapshots.positions("default")) == 1


def test_bad_events_go_to_the_dead_letters_once_and_the_fold_goes_on(anywhere: Runtime) -> None:
    write(anywhere, ["a", "b"])
    bad = anywhere.log.append_raw("default", b"{broken")
    write(anywhere, ["c", "d"])
    fold_and_publish(anywhere, "default")
    fold_and_publish(anywhere, "default", force=True)
    assert [r.position for r in anywhere.log.dead_letters("default")] == [bad]
    found = latest_snapshot(anywhere.snapshots, "default")
    assert found is not None and len(load_state(found[1]).memories) == 2


def test_a_snapshot_another_worker_published_replaces_the_cached_state(anywhere: Runtime) -> None:
    write(anywhere, ["a", "b"])
    fold_and_publish(anywhere, "default")  # this process now caches its published state
    positions = write(anywhere, ["b", "c"])
    other = rebuild(anywhere.log, anywhere.snapshots, "default")
    latest = anywhere.snapshots.latest_position("default")
    assert anywhere.snapshots.publish("default", dump_state(other), other.position, latest)
    write(anywhere, ["c", "d"])
    assert fold_and_publish(anywhere, "default")["published"]
    assert published_hash(anywhere) == from_zero_hash(anywhere)
    assert positions[-1] in anywhere.snapshots.positions("default")


def test_a_snapshot_waits_until_enough_events_have_gathered(anywhere: Runtime) -> None:
    anywhere.settings = dataclasses.replace(anywhere.settings, snapshot_every=3)
    write(anywhere, ["a", "b"], ["b", "c"])
    assert fold_and_publish(anywhere, "default")["published"] is False
    assert anywhere.snapshots.latest_position("default") is None
    assert anywhere.log.fold_due("default") is not None  # the scheduler comes back
    positions = write(anywhere, ["c", "d"])
    assert fold_and_publish(anywhere, "default")["published"]
    assert anywhere.snapshots.positions("default") == [positions[-1]]


def test_a_folded_consolidation_is_published_at_once(anywhere: Runtime) -> None:
    anywhere.settings = dataclasses.replace(anywhere.settings, snapshot_every=1000)
    write(anywhere, ["a", "b"], ["b", "c"])
    fold_and_publish(anywhere, "default", force=True)
    report = consolidate(anywhere, "default")
    assert report.appended_at is not None
    assert fold_and_publish(anywhere, "default")["published"]  # one event, yet published
    assert anywhere.snapshots.latest_position("default") == Position.parse(report.appended_at)


def test_under_a_stream_of_events_publishing_takes_at_most_its_share_of_the_time(
    anywhere: Runtime, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A publish that took 1 s, at a share of a quarter: enough events again 2 s later are
    held back (and the scheduler comes back at 3 s), published 3 s after it."""
    anywhere.settings = dataclasses.replace(
        anywhere.settings, snapshot_every=2, snapshot_share=0.25, snapshot_after=60.0
    )
    publish = anywhere.snapshots.publish

    def slow_publish(*args, **kwargs):  # type: ignore[no-untyped-def]
        clock.advance(1.0)
        return publish(*args, **kwargs)

    monkeypatch.setattr(anywhere.snapshots, "publish", slow_publish)
    write(anywhere, ["a", "b"], ["b", "c"])
    assert fold_and_publish(anywhere, "default")["published"]
    published = clock()
    clock.advance(2.0)
    write(anywhere, ["c", "d"], ["d", "e"])
    assert fold_and_publish(anywhere, "default")["published"] is False
    assert anywhere.log.fold_due("default") == published + 3.0
    clock.advance(1.0)
    positions = write(anywhere, ["e", "f"])
    assert fold_and_publish(anywhere, "default")["published"]
    assert anywhere.snapshots.latest_position("default") == positions[-1]
    # At a share of 1, every snapshot_every events publish, however long it takes
    anywhere.settings = dataclasses.replace(anywhere.settings, snapshot_share=1.0)
    write(anywhere, ["f", "g"], ["g", "h"])
    assert fold_and_publish(anywhere, "default")["published"]


def test_a_few_events_are_published_once_the_oldest_has_waited_long_enough(
    anywhere: Runtime, clock: Clock
) -> None:
    anywhere.settings = dataclasses.replace(
        anywhere.settings, snapshot_every=1000, snapshot_after=60.0
    )
    positions = write(anywhere, ["a", "b"])
    assert fold_and_publish(anywhere, "default")["published"] is False
    assert not anywhere.log.fold_wanted("default")  # no job runs again and again meanwhile
    clock.advance(59.0)
    assert anywhere.log.tenants_to_fold(clock()) == []
    clock.advance(2.0)  # no append in between: the due time brings it back
    assert anywhere.log.tenants_to_fold(clock()) == ["default"]
    anywhere.folded.clear()  # and on a worker that did not fold it before, too
    assert fold_and_publish(anywhere, "default")["published"]
    assert anywhere.snapshots.latest_position("default") == positions[-1]
    assert anywhere.log.fold_due("default") is None


def test_the_tenants_to_fold_are_those_with_new_events_or_a_snapshot_due(
    anywhere: Runtime, clock: Clock
) -> None:
    for tenant in ("due", "idle", "new", "later"):
        write(anywhere, ["a", "b"], tenant=tenant)
        anywhere.log.clear_fold_wanted(tenant, anywhere.log.fold_wanted(tenant))
    anywhere.log.want_fold("new")
    anywhere.log.set_fold_due("due", clock() - 1.0)
    anywhere.log.set_fold_due("later", clock() + 60.0)
    assert anywhere.log.tenants_to_fold(clock()) == ["due", "new"]
    clock.advance(61.0)
    assert anywhere.log.tenants_to_fold(clock()) == ["due", "later", "new"]


def test_scheduler_enqueues_one_job_per_tenant_and_a_worker_runs_it(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    assert schedule_folds(runtime) == ["default"]
    assert enqueue_fold(runtime, "default") is False  # already queued
    work(runtime)
    assert runtime.snapshots.latest_position("default") is not None
    assert schedule_folds(runtime) == []  # flag cleared by the job


def test_a_fold_that_dies_halfway_leaves_the_fold_wanted(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flag used to be cleared as a fold began: a worker killed during the fold left the
    tail unfolded in any snapshot until the next append, however long that took."""
    write(runtime, ["a", "b"])

    def killed(*args: object, **kwargs: object) -> None:
        raise SystemExit("SIGKILL")

    monkeypatch.setattr("assocmem.workers.jobs.fold_job.fold_entries", killed)
    with pytest.raises(SystemExit):
        fold_and_publish(runtime, "default")
    monkeypatch.undo()
    assert schedule_folds(runtime) == ["default"]
    work(runtime)
    assert runtime.snapshots.latest_position("default") is not None
    assert schedule_folds(runtime) == []


def test_small_changes_publish_deltas_that_keep_their_base_and_load_as_the_state(
    anywhere: Runtime,
) -> None:
    # Keep only the newest snapshot: its base must be kept beside it all the same.
    anywhere.snapshots._rule = Ladder(recent=1, hourly=0, daily=0)  # type: ignore[attr-defined]
    write(anywhere, *[[f"c{n}", f"d{n % 5}"] for n in range(40)])
    base = Position.parse(fold_and_publish(anywhere, "default")["position"])
    for n in range(3):
        write(anywhere, [f"new{n}", "d1"])
        fold_and_publish(anywhere, "default")
    positions = anywhere.snapshots.positions("default")
    latest = latest_snapshot(anywhere.snapshots, "default")
    assert latest is not None and base_of(latest[1]) == base
    assert base in positions and len(positions) == 2  # the newest delta and its base
    assert published_hash(anywhere) == from_zero_hash(anywhere)
    assert len(latest[1]) < len(anywhere.snapshots.load("default", base) or b"") / 2
    anywhere.folded.clear()  # a new worker: starts from the delta, goes on with deltas
    write(anywhere, ["later", "d2"])
    fold_and_publish(anywhere, "default")
    newest = latest_snapshot(anywhere.snapshots, "default")
    assert newest is not None and base_of(newest[1]) == base
    assert published_hash(anywhere) == from_zero_hash(anywhere)


def test_after_a_large_delta_small_changes_publish_small_deltas_of_it(anywhere: Runtime) -> None:
    """Each publish writes what changed since the last delta of the base, not since the
    base: a note's worth, where a delta of the base would hold every note since."""
    anywhere.snapshots._rule = Ladder(recent=1, hourly=0, daily=0)  # type: ignore[attr-defined]
    write(anywhere, *[[f"c{n}", f"d{n % 5}"] for n in range(400)])
    full = Position.parse(fold_and_publish(anywhere, "default")["position"])
    write(anywhere, *[[f"e{n}", "d1"] for n in range(90)])
    delta = Position.parse(fold_and_publish(anywhere, "default")["position"])
    sizes = []
    for n in range(3):
        write(anywhere, [f"new{n}", "d2"])
        fold_and_publish(anywhere, "default")
        latest = latest_snapshot(anywhere.snapshots, "default")
        assert latest is not None and base_of(latest[1]) == delta
        sizes.append(len(latest[1]))
    assert base_of(anywhere.snapshots.load("default", delta) or b"") == full
    assert anywhere.snapshots.positions("default")[:2] == [full, delta]
    assert max(sizes) < len(anywhere.snapshots.load("default", delta) or b"") / 2
    assert published_hash(anywhere) == from_zero_hash(anywhere)
    anywhere.folded.clear()  # a new worker: loads the small delta, goes on with small ones
    write(anywhere, ["later", "d3"])
    fold_and_publish(anywhere, "default")
    newest = latest_snapshot(anywhere.snapshots, "default")
    assert newest is not None and base_of(newest[1]) == delta
    assert published_hash(anywhere) == from_zero_hash(anywhere)


def test_each_snapshot_counts_the_events_folded_into_it_across_workers(anywhere: Runtime) -> None:
    write(anywhere, ["a", "b"], ["b", "c"])
    fold_and_publish(anywhere, "default")
    write(anywhere, ["c", "d"])
    fold_and_publish(anywhere, "default")
    anywhere.folded.clear()  # a new worker goes on from the published snapshot
    write(anywhere, ["d", "e"], ["e", "f"], ["f", "g"])
    fold_and_publish(anywhere, "default")
    positions = anywhere.snapshots.positions("default")
    assert [anywhere.snapshots.folded("default", p) for p in positions] == [2, 3, 6]


def publish_an_older_format(runtime: Runtime) -> Position:
    """What an upgrade that changes the snapshot format does to a tenant's snapshots: the
    latest (at the position returned) is one the code cannot read."""
    write(runtime, ["a", "b"], ["b", "c"])
    fold_and_publish(runtime, "default", force=True)
    latest = latest_snapshot(runtime.snapshots, "default")
    assert latest is not None
    stale = load_state(latest[1])  # a link no event taught: read, it would change the hash
    stale.set_learned(stale.concept_index["a"], stale.concept_index["c"], 9.0, latest[0])
    raw = encode_state(stale)
    (size,) = struct.unpack_from("<Q", raw, 0)
    header = orjson.loads(raw[8 : 8 + size]) | {"format": SNAPSHOT_FORMAT - 1}
    edited = orjson.dumps(header)
    older = zstandard.ZstdCompressor().compress(
        struct.pack("<Q", len(edited)) + edited + raw[8 + size :]
    )
    position = write(runtime, ["c", "d"])[0]
    assert runtime.snapshots.publish("default", older, position, latest[0])
    runtime.folded.clear()  # a worker started on the new version
    return position


def test_a_snapshot_of_an_older_format_is_folded_anew_from_the_log_and_replaced(
    anywhere: Runtime,
) -> None:
    publish_an_older_format(anywhere)
    assert content_hash(rebuild(anywhere.log, anywhere.snapshots, "default")) == from_zero_hash(
        anywhere
    )
    write(anywhere, ["d", "e"])
    assert fold_and_publish(anywhere, "default", force=True)["published"]
    assert published_hash(anywhere) == from_zero_hash(anywhere)


def test_a_snapshot_that_cannot_be_read_is_replaced_at_its_position_before_any_new_event(
    anywhere: Runtime,
) -> None:
    position = publish_an_older_format(anywhere)
    anywhere.log.clear_fold_wanted("default", anywhere.log.fold_wanted("default"))
    epoch, state = latest_loaded(anywhere.log, anywhere.snapshots, "default")  # the API's load
    assert state.position == ZERO
    assert anywhere.log.tenants_to_fold(anywhere.clock()) == ["default"]  # it asked
    assert fold_and_publish(anywhere, "default")["published"]  # not forced, no new event
    assert anywhere.snapshots.positions("default")[-1] == position  # once, replaced
    assert anywhere.snapshots.positions("default").count(position) == 1
    assert published_hash(anywhere) == from_zero_hash(anywhere)
    assert latest_loaded(anywhere.log, anywhere.snapshots, "default")[1].position == position
    assert not fold_and_publish(anywhere, "default")["published"]  # and once only


def test_a_long_fold_logs_its_progress_once_a_mark_not_once_a_chunk(
    clock: Clock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Each job on a state past the first mark logged a line per chunk of 1,000 entries."""
    runtime = Runtime.in_memory(Settings(), clock)
    monkeypatch.setattr(fold_job, "PROGRESS_EVERY", 10)
    monkeypatch.setattr(  # read in chunks of 2 entries
        fold_job,
        "iter_entries",
        lambda log, tenant, after: iter_entries(log, tenant, after, batch=2),
    )
    write(runtime, *[["a", f"b{n}"] for n in range(25)])
    fold_and_publish(runtime, "default", force=True)
    write(runtime, *[["a", f"c{n}"] for n in range(12)])  # 25 -> 37 memories: one mark
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=fold_job.__name__):
        fold_and_publish(runtime, "default", force=True)
    lines = [r.getMessage() for r in caplog.records if "memories, at" in r.getMessage()]
    assert len(lines) == 1  # past 30, at the end of the chunk that went past it
