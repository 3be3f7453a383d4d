from __future__ import annotations

import dataclasses
import time

from rq import SimpleWorker
from rq.serializers import JSONSerializer

from assocmem.engine.event import Event
from assocmem.engine.snapshot import content_hash, dump_state, load_state
from assocmem.workers.fold_job import fold_and_publish
from assocmem.workers.keys import dead_letter_key, log_key
from assocmem.workers.replay import Rebuild, rebuild
from assocmem.workers.runtime import Runtime, use_runtime
from assocmem.workers.scheduler import enqueue_fold, schedule_folds


def write(runtime: Runtime, *concept_sets: list[str]) -> list[str]:
    events = [
        Event(
            "memory.written",
            "default",
            "agent",
            1.0,
            {"text": " ".join(c), "concepts": c, "importance": 3, "extractor": "t"},
        )
        for c in concept_sets
    ]
    return [a.position for a in runtime.log.append("default", events)]


def test_fold_publishes_a_snapshot_equal_to_a_fold_from_zero(runtime: Runtime) -> None:
    write(runtime, ["a", "b"], ["b", "c"])
    first = fold_and_publish(runtime, "default")
    positions = write(runtime, ["c", "d"])
    second = fold_and_publish(runtime, "default")
    assert first["published"] and second["published"]
    assert runtime.snapshots.positions("default") == [first["position"], positions[-1]]
    _, blob = runtime.snapshots.latest("default")
    from_zero = rebuild(
        runtime.log, runtime.snapshots, "default", Rebuild(skip_types=frozenset({"none"}))
    )
    assert content_hash(load_state(blob)) == content_hash(from_zero)


def test_a_second_fold_with_nothing_new_publishes_nothing(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    fold_and_publish(runtime, "default")
    assert fold_and_publish(runtime, "default")["published"] is False
    assert len(runtime.snapshots.positions("default")) == 1


def test_publish_is_refused_when_another_publisher_moved_latest(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    assert runtime.snapshots.publish("default", b"x", "5-0", expected=None)
    assert not runtime.snapshots.publish("default", b"y", "6-0", expected=None)
    assert runtime.snapshots.latest_position("default") == "5-0"


def test_bad_events_go_to_the_dead_letter_stream_once(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    bad = runtime.data.xadd(log_key("default"), {"e": b"{broken"}).decode()
    write(runtime, ["c", "d"])
    fold_and_publish(runtime, "default")
    fold_and_publish(runtime, "default")
    dead = runtime.data.xrange(dead_letter_key("default"))
    assert [p.decode() for p, _ in dead] == [bad]
    _, blob = runtime.snapshots.latest("default")
    assert len(load_state(blob).memories) == 2


def test_scheduler_enqueues_one_job_per_tenant_and_a_worker_runs_it(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    assert schedule_folds(runtime) == ["default"]
    assert enqueue_fold(runtime, "default") is False  # already queued
    use_runtime(runtime)
    SimpleWorker(
        [runtime.queue()], connection=runtime.queue_connection, serializer=JSONSerializer
    ).work(burst=True)
    assert runtime.snapshots.latest_position("default") is not None
    assert schedule_folds(runtime) == []  # flag cleared by the job


def test_a_snapshot_another_worker_published_replaces_the_cached_state(runtime: Runtime) -> None:
    write(runtime, ["a", "b"])
    fold_and_publish(runtime, "default")  # this process now caches its published state
    positions = write(runtime, ["b", "c"])
    other = rebuild(runtime.log, runtime.snapshots, "default")
    assert runtime.snapshots.publish(
        "default", dump_state(other), other.position, runtime.snapshots.latest_position("default")
    )
    write(runtime, ["c", "d"])
    assert fold_and_publish(runtime, "default")["published"]
    _, blob = runtime.snapshots.latest("default")
    from_zero = rebuild(
        runtime.log, runtime.snapshots, "default", Rebuild(skip_types=frozenset({"none"}))
    )
    assert content_hash(load_state(blob)) == content_hash(from_zero)
    assert positions[-1] in runtime.snapshots.positions("default")


def test_a_snapshot_waits_until_enough_events_have_gathered(runtime: Runtime) -> None:
    runtime.settings = dataclasses.replace(runtime.settings, snapshot_every=3)
    write(runtime, ["a", "b"], ["b", "c"])
    assert fold_and_publish(runtime, "default")["published"] is False
    assert runtime.snapshots.latest_position("default") is None
    assert schedule_folds(runtime) == ["default"]  # flagged again, so the job comes back
    positions = write(runtime, ["c", "d"])
    assert fold_and_publish(runtime, "default")["published"]
    assert runtime.snapshots.positions("default") == [positions[-1]]


def test_a_few_events_are_published_once_the_oldest_has_waited_long_enough(
    runtime: Runtime,
) -> None:
    runtime.settings = dataclasses.replace(
        runtime.settings, snapshot_every=1000, snapshot_after=0.3
    )
    positions = write(runtime, ["a", "b"])
    assert fold_and_publish(runtime, "default")["published"] is False
    time.sleep(0.4)  # no append in between: only the job's own flag brings it back
    assert schedule_folds(runtime) == ["default"]
    assert fold_and_publish(runtime, "default")["published"]
    assert runtime.snapshots.latest_position("default") == positions[-1]
