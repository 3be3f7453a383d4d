"""The archive, on both stores: old entries move to compressed segments and the log reads
the same through it; the archive job keeps what serving needs in the stream."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from assocmem.engine.position import ZERO, Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.workers.jobs.archive_job import archivable_upto, archive
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.state.rebuild import Rebuild, rebuild
from assocmem.workers.store.ports import iter_entries
from tests.stores import KINDS, Clock, make_runtime, write

DAY = 86_400


@pytest.fixture(params=KINDS)
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    yield from make_runtime(request, request.param, Clock())


def everything(runtime: Runtime, after: Position = ZERO, batch: int = 3) -> list:  # type: ignore[type-arg]
    return [e for chunk in iter_entries(runtime.log, "default", after, None, batch) for e in chunk]


def test_archived_entries_read_as_the_head_of_the_log(runtime: Runtime) -> None:
    positions = write(runtime, *[[f"c{n}", "x"] for n in range(10)])
    before = everything(runtime)
    first = runtime.log.archive("default", positions[3], 3)
    second = runtime.log.archive("default", positions[6], 100)
    assert first is not None and second is not None
    assert (first.first, first.last, first.count) == (positions[0], positions[2], 3)
    assert (second.first, second.last, second.count) == (positions[3], positions[6], 4)
    assert runtime.log.archive("default", positions[6], 100) is None  # nothing left to move
    assert runtime.log.segments("default") == [first, second]
    # Any batch size, from any point: the same entries, across segments and into the stream.
    assert everything(runtime) == before
    assert everything(runtime, positions[1], batch=4) == before[2:]
    assert runtime.log.entries("default", positions[1], positions[4]) == before[2:5]
    assert runtime.log.length("default") == 10
    assert runtime.log.has("default", positions[0]) and runtime.log.has("default", positions[9])
    assert not runtime.log.has("default", Position(positions[0].ms - 1, 5))


def test_a_replay_across_the_archive_gives_the_same_state(runtime: Runtime) -> None:
    positions = write(runtime, *[[f"c{n % 4}", f"d{n % 3}"] for n in range(30)])
    whole = content_hash(
        rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True))
    )
    middle = content_hash(
        rebuild(runtime.log, runtime.snapshots, "default", Rebuild(positions[15]))
    )
    runtime.log.archive("default", positions[20], 8)
    runtime.log.archive("default", positions[20], 8)
    assert (
        content_hash(rebuild(runtime.log, runtime.snapshots, "default", Rebuild(from_zero=True)))
        == whole
    )
    assert (
        content_hash(rebuild(runtime.log, runtime.snapshots, "default", Rebuild(positions[15])))
        == middle
    )


def test_the_job_archives_what_is_old_and_in_a_snapshot_and_never_the_last_entry(
    runtime: Runtime,
) -> None:
    runtime.settings = dataclasses.replace(runtime.settings, retention_days=1.0)
    positions = write(runtime, *[[f"c{n}", "x"] for n in range(5)])
    now = positions[-1].ms / 1000
    assert archivable_upto(runtime, "default", now + 2 * DAY) is None  # no snapshot yet
    fold_and_publish(runtime, "default", force=True)
    assert (
        archivable_upto(runtime, "default", now) is None
        or archivable_upto(runtime, "default", now) < positions[0]
    )  # nothing is a day old
    report = archive(runtime, "default", clock=lambda: now + 2 * DAY)
    assert (report.entries, report.segments) == (4, 1)
    assert runtime.log.last_position("default") == positions[-1]
    assert [p for p, _ in everything(runtime)] == positions
    assert report.stored_bytes > 0 and report.raw_bytes > 0
