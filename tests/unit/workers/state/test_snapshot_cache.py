"""The local copy of the newest full snapshot (workers/state/snapshot_cache.py): kept equal to the
store's, served only when the store holds the very same bytes, never half-read."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.rebuild import Rebuild, rebuild, starting_state
from assocmem.workers.state.snapshot_cache import CachingSnapshotStore, SnapshotCache, latest_state
from assocmem.workers.store.memory import InMemoryEventLog, InMemorySnapshotStore
from assocmem.workers.store.ports import snapshot_digest
from tests.stores import Clock, write


@pytest.fixture
def cache(tmp_path: Path) -> SnapshotCache:
    return SnapshotCache(tmp_path / "snapshot-cache", "default")


@pytest.fixture
def runtime(cache: SnapshotCache) -> Runtime:
    store = CachingSnapshotStore(InMemorySnapshotStore(), cache)
    return Runtime(Settings(snapshot_every=1), InMemoryEventLog(), store, None, Clock())


MANY = [[f"topic{n}", f"word{n % 7}", "timeout"] for n in range(40)]
"""Notes enough that one more is published as a delta of them."""


def publish(runtime: Runtime, *concept_sets: list[str]) -> str:
    write(runtime, *concept_sets)
    published = fold_and_publish(runtime, "default", force=True)
    assert published["published"]
    return str(published["position"])


def test_a_full_snapshot_published_is_copied_and_its_deltas_are_not(
    runtime: Runtime, cache: SnapshotCache
) -> None:
    full = publish(runtime, *MANY)
    copied = cache.read()
    assert copied is not None and str(copied[0]) == full
    assert copied[2] == runtime.snapshots.load("default", copied[0])
    assert copied[1] == runtime.snapshots.digest("default", copied[0])
    publish(runtime, ["retry", "jitter"])  # a delta of the full one
    assert runtime.snapshots.latest_position("default") != copied[0]
    assert cache.read() == copied
    assert cache.path.stat().st_mode & 0o077 == 0  # what users wrote: the owner's only


def test_only_the_cache_s_tenant_is_copied_and_a_drop_removes_the_copy(
    runtime: Runtime, cache: SnapshotCache
) -> None:
    publish(runtime, ["timeout", "jitter"])
    write(runtime, ["billing", "outage"], tenant="other")
    assert fold_and_publish(runtime, "other", force=True)["published"]
    assert [p.name for p in cache.directory.iterdir()] == ["default.snapshot"]
    runtime.snapshots.drop("default")
    assert cache.read() is None and not cache.path.exists()


def test_the_copy_decoded_ahead_is_the_state_served_when_the_store_holds_its_bytes(
    runtime: Runtime, cache: SnapshotCache
) -> None:
    publish(runtime, *MANY)
    publish(runtime, ["retry", "jitter"])  # the latest is a delta on the copied full one
    assert runtime.snapshots.latest_position("default") != cache.read()[0]  # type: ignore[index]
    early = cache.decoded()
    assert early is not None
    state = latest_state(runtime.snapshots, cache, early)
    assert state is early.state  # not decoded a second time
    assert content_hash(state) == content_hash(starting_state(runtime.snapshots, "default", None))
    assert (
        len(state.memories) == len(MANY) + 1 and state.base is None
    )  # marks dropped, as a reader's


class UndigestedStore(InMemorySnapshotStore):
    """Snapshots published before digests were kept."""

    def digest(self, tenant: str, position: Position) -> str | None:
        return None


@pytest.mark.parametrize("digested", [True, False])
def test_a_copy_of_the_latest_snapshot_itself_is_served_by_its_digest_or_else_its_bytes(
    cache: SnapshotCache, digested: bool
) -> None:
    inner = InMemorySnapshotStore() if digested else UndigestedStore()
    store = CachingSnapshotStore(inner, cache)
    runtime = Runtime(Settings(snapshot_every=1), InMemoryEventLog(), store, None, Clock())
    position = publish(runtime, *MANY)
    assert str(store.latest_position("default")) == position  # the full one is the latest
    early = cache.decoded()
    assert early is not None and latest_state(store, cache, early) is early.state
    other_bytes = dataclasses.replace(early, digest=snapshot_digest(b"other bytes"))
    decoded_ahead = other_bytes.state
    assert latest_state(store, cache, other_bytes) is not decoded_ahead
    assert other_bytes.state is None  # let go before the store's snapshot was decoded


def test_a_stale_copy_is_never_served_and_is_replaced_by_the_store_s_full_snapshot(
    runtime: Runtime, cache: SnapshotCache
) -> None:
    position = publish(runtime, ["timeout", "jitter"])
    other = Runtime.in_memory(Settings(snapshot_every=1), Clock())
    write(other, ["erased", "words"])  # another history, copied under the same position
    stale = dump_state(rebuild(other.log, other.snapshots, "default", Rebuild()))
    at = runtime.snapshots.latest_position("default")
    cache.write(at, stale, snapshot_digest(stale))  # type: ignore[arg-type]
    early = cache.decoded()
    assert early is not None
    decoded_ahead = early.state
    state = latest_state(runtime.snapshots, cache, early)
    assert state is not decoded_ahead and "erased" not in state.concept_index
    assert content_hash(state) == content_hash(starting_state(runtime.snapshots, "default", None))
    copied = cache.read()
    assert copied is not None and str(copied[0]) == position and copied[2] != stale


def test_a_copy_of_a_store_without_snapshots_is_removed(cache: SnapshotCache) -> None:
    cache.write(Position(5, 0), b"x", snapshot_digest(b"x"))
    assert cache.read() == (Position(5, 0), snapshot_digest(b"x"), b"x")
    state = latest_state(InMemorySnapshotStore(), cache, None)
    assert len(state.memories) == 0 and not cache.path.exists()


@pytest.mark.parametrize(
    "contents",
    [
        b"",
        b"no header at all",
        b"assocmem-snapshot-copy 2 1-0 100 00\ncut short",
        b"assocmem-snapshot-copy 2 not-a-position 3 00\nabc",
        b"assocmem-snapshot-copy 1 1-0 3\nabc",  # another format
    ],
)
def test_a_copy_that_is_not_whole_is_not_read(cache: SnapshotCache, contents: bytes) -> None:
    cache.directory.mkdir()
    cache.path.write_bytes(contents)
    assert cache.read() is None and cache.decoded() is None


def test_a_whole_copy_whose_bytes_do_not_decode_is_removed(cache: SnapshotCache) -> None:
    cache.directory.mkdir()
    cache.path.write_bytes(b"assocmem-snapshot-copy 2 1-0 7 00\ngarbage")
    assert cache.read() is not None
    assert cache.decoded() is None and not cache.path.exists()


def test_a_writer_killed_mid_write_leaves_no_file_behind_after_the_next_write(
    cache: SnapshotCache,
) -> None:
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    gone = subprocess.run(command, capture_output=True, text=True, check=True)
    cache.directory.mkdir()
    orphan = cache.directory / f".default.{int(gone.stdout)}.tmp"
    orphan.write_bytes(b"half a snapshot")
    cache.write(Position(5, 0), b"whole", snapshot_digest(b"whole"))
    assert not orphan.exists()
    assert [p.name for p in cache.directory.iterdir()] == ["default.snapshot"]


def test_a_copy_that_cannot_be_written_costs_no_publish(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_bytes(b"")
    cache = SnapshotCache(tmp_path / "a-file" / "snapshot-cache", "default")  # no such dir
    store = CachingSnapshotStore(InMemorySnapshotStore(), cache)
    runtime = Runtime(Settings(snapshot_every=1), InMemoryEventLog(), store, None, Clock())
    publish(runtime, ["timeout", "jitter"])
    assert store.latest_position("default") is not None and cache.read() is None


def test_a_copy_of_a_snapshot_the_store_dropped_while_it_was_written_is_not_kept(
    runtime: Runtime, cache: SnapshotCache
) -> None:
    publish(runtime, *MANY)
    copied = cache.read()
    assert copied is not None
    position, _, blob = copied
    runtime.snapshots.drop("default")  # an erasure, between a publish and its copy
    cache.keep(runtime.snapshots, position, blob)
    assert cache.read() is None and not cache.path.exists()
    publish(runtime, *MANY)  # republished: a copy of the old bytes at its place goes too
    latest = runtime.snapshots.latest_position("default")
    assert latest is not None
    cache.keep(runtime.snapshots, latest, blob)
    assert cache.read() is None
