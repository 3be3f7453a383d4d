"""Writes wait for disk room (workers/store/disk_space.py, disk_guard.py): appends are refused
with DiskLow while a watched disk is short, snapshots are not published, reads go on, and
all resumes once there is room. The disk's real free space is used; a threshold above it
stands for a full disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from assocmem.workers.errors import DiskLow, StoreUnavailable
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings, load_settings
from assocmem.workers.store.disk_guard import with_disk_guard
from assocmem.workers.store.disk_space import MB, DiskSpace
from assocmem.workers.store.memory import InMemoryEventLog, InMemorySnapshotStore
from tests.stores import Clock, note, write

PLENTY = 1  # MB: any disk a test runs on has this free
NEVER = 2**40  # MB: no disk has this free


def _free_mb(path: Path) -> int:
    return DiskSpace([path], PLENTY).rooms()[0].free // MB


def test_a_disk_short_of_room_names_itself_and_refuses_with_a_retry(tmp_path: Path) -> None:
    short = DiskSpace([tmp_path], NEVER)
    said = short.shortage()
    assert said is not None and str(tmp_path) in said and "ASSOCMEM_MIN_FREE_MB" in said
    with pytest.raises(DiskLow) as refused:
        short.check()
    assert isinstance(refused.value, StoreUnavailable) and refused.value.retry_after > 0
    assert DiskSpace([tmp_path], PLENTY).shortage() is None


def test_a_write_bigger_than_the_room_above_the_threshold_waits(tmp_path: Path) -> None:
    disk = DiskSpace([tmp_path], PLENTY)
    free = _free_mb(tmp_path)
    assert disk.shortage(needed=(free - 2 * PLENTY) * MB) is None
    assert disk.shortage(needed=free * MB) is not None


def test_no_threshold_or_no_path_watches_nothing(tmp_path: Path) -> None:
    assert DiskSpace([tmp_path], 0).paths == ()
    assert DiskSpace([tmp_path], 0).shortage(needed=2**62) is None
    assert DiskSpace([], NEVER).shortage() is None


def test_a_directory_not_made_yet_is_measured_on_its_parent(tmp_path: Path) -> None:
    (room,) = DiskSpace([tmp_path / "rungs" / "later"], PLENTY).rooms()
    assert room.path == tmp_path / "rungs" / "later" and room.free > PLENTY * MB


def test_a_measure_is_kept_a_second_then_taken_again(tmp_path: Path) -> None:
    clock = Clock()
    disk = DiskSpace([tmp_path], PLENTY, clock)
    first = disk.rooms()
    (tmp_path / "ballast").write_bytes(b"\0" * 4096)  # may or may not change the measure
    assert disk.rooms() is first
    clock.advance(1.0)
    assert disk.rooms() is not first


def test_appends_are_refused_while_short_and_the_log_reads_on(tmp_path: Path) -> None:
    disk = DiskSpace([tmp_path], PLENTY)
    inner = InMemoryEventLog()
    log = with_disk_guard(inner, disk)
    log.append("default", [note("billing", "failed")])
    disk.min_free = NEVER * MB
    with pytest.raises(DiskLow):
        log.append("default", [note("billing", "retried")])
    assert log.length("default") == 1 and log.last_position("default") is not None
    assert with_disk_guard(inner, DiskSpace([], PLENTY)) is inner


def test_the_watched_directories_are_named_ones_and_the_snapshot_copies(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "ASSOCMEM_DISK_PATHS": f"{tmp_path / 'redis'}:{tmp_path / 'other'}",
            "ASSOCMEM_SNAPSHOT_RUNGS": str(tmp_path / "rungs"),
            "ASSOCMEM_MIN_FREE_MB": "64",
        }
    )
    assert settings.min_free_mb == 64
    assert settings.watched_paths() == (tmp_path / "redis", tmp_path / "other", tmp_path / "rungs")


def test_a_fold_keeps_its_state_unpublished_while_short_and_publishes_once_there_is_room(
    tmp_path: Path,
) -> None:
    clock = Clock()
    disk = DiskSpace([tmp_path], NEVER, clock)
    runtime = Runtime(
        Settings(snapshot_every=1),
        InMemoryEventLog(),
        InMemorySnapshotStore(Settings().ladder()),
        None,
        clock,
        disk=disk,
    )
    write(runtime, ["billing", "failed"])
    waiting = fold_and_publish(runtime, "default", force=True)
    assert waiting["published"] is False
    assert runtime.snapshots.latest_position("default") is None
    assert runtime.folded["default"].state.memories, "the fold is kept for the next try"
    disk.min_free = PLENTY * MB
    clock.advance(1.0)
    assert fold_and_publish(runtime, "default", force=True)["published"] is True
    assert runtime.snapshots.latest_position("default") is not None


def test_settings_refuse_a_negative_threshold() -> None:
    with pytest.raises(Exception, match="ASSOCMEM_MIN_FREE_MB"):
        load_settings({"ASSOCMEM_MIN_FREE_MB": "-1"})
