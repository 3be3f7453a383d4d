"""Redis's files are read ahead into the page cache when they are not there already."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assocmem.workers.runtime.redis_server import data_files
from assocmem.workers.store.page_cache import CACHED_SECONDS, CHUNK, SMALL, read_ahead


def written(path: Path, size: int) -> Path:
    with path.open("wb") as file:
        for _ in range(size // CHUNK):
            file.write(os.urandom(CHUNK))
        file.flush()
        os.fsync(file.fileno())
    return path


def evicted(path: Path) -> Path:
    """`path` out of the page cache (its pages are clean: written and synced)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)
    return path


def from_memory(path: Path) -> bool:
    """Whether its last chunk reads at memory speed (the rest stays as it is)."""
    with path.open("rb", buffering=0) as file:
        file.seek(-CHUNK, 2)
        start = time.perf_counter()
        file.read(CHUNK)
        return time.perf_counter() - start < CACHED_SECONDS


def test_a_cold_file_is_read_through_and_then_left_alone(tmp_path: Path) -> None:
    aof = evicted(written(tmp_path / "appendonly.aof", SMALL + 2 * CHUNK))
    if from_memory(aof):
        pytest.skip("this file system keeps the file in memory whatever it is told")
    reading = read_ahead([aof])
    assert reading is not None
    reading.join(timeout=60)
    assert not reading.is_alive()
    # in the cache now: not read again. A chunk is told cached by how fast it reads, and on
    # a loaded machine a cached one can read slowly: the rule must hold on one of 3 tries
    assert any(read_ahead([aof]) is None for _ in range(3))


def test_small_missing_and_cached_files_start_no_thread(tmp_path: Path) -> None:
    small = written(tmp_path / "small.aof", CHUNK)
    cached = written(tmp_path / "cached.aof", SMALL + 2 * CHUNK)
    assert read_ahead([small, tmp_path / "missing.aof", cached]) is None


def test_redis_7s_aof_is_read_base_first_then_increments(tmp_path: Path) -> None:
    parts = tmp_path / "appendonlydir"
    parts.mkdir()
    for name in (
        "appendonly.aof.3.incr.aof",
        "appendonly.aof.3.base.rdb",
        "appendonly.aof.manifest",
    ):
        (parts / name).touch()
    assert [p.name for p in data_files(tmp_path)] == [
        "appendonly.aof.3.base.rdb",
        "appendonly.aof.3.incr.aof",
        "appendonly.aof",
        "dump.rdb",
    ]
