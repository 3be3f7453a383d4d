"""Redis's files are read ahead into the page cache when they are not there already."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assocmem.workers.runtime.redis_server import data_files
from assocmem.workers.store.page_cache import (
    CACHED_SECONDS,
    CHUNK,
    SMALL,
    bytes_fetched,
    read_ahead,
)


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
    """Whether its last chunk reads from memory (the rest stays as it is): by the kernel's
    count of what the read fetched from storage, else by how fast it reads."""
    with path.open("rb", buffering=0) as file:
        file.seek(-CHUNK, 2)
        before = bytes_fetched()
        start = time.perf_counter()
        file.read(CHUNK)
        elapsed = time.perf_counter() - start
        after = bytes_fetched()
    if before is None or after is None:
        return elapsed < CACHED_SECONDS
    return after == before


def test_a_cold_file_is_read_through_and_then_left_alone(tmp_path: Path) -> None:
    aof = evicted(written(tmp_path / "appendonly.aof", SMALL + 2 * CHUNK))
    if from_memory(aof):
        pytest.skip("this file system keeps the file in memory whatever it is told")
    reading = read_ahead([aof])
    assert reading is not None
    reading.join(timeout=60)
    assert not reading.is_alive()
    # in the cache now: not read again. Where the kernel counts no I/O, a chunk is told
    # cached by how fast it reads, and on a loaded machine a cached one can read slowly
    tries = 1 if bytes_fetched() is not None else 3
    assert any(read_ahead([aof]) is None for _ in range(tries))


def test_a_read_the_page_cache_serves_fetches_nothing_from_storage(tmp_path: Path) -> None:
    if bytes_fetched() is None:
        pytest.skip("this kernel keeps no I/O count per thread")
    aof = evicted(written(tmp_path / "appendonly.aof", 2 * CHUNK))
    if from_memory(aof):
        pytest.skip("this file system keeps the file in memory whatever it is told")
    evicted(aof)
    with aof.open("rb", buffering=0) as file:
        before = bytes_fetched()
        file.read(CHUNK)
        cold = bytes_fetched()
        file.seek(0)
        file.read(CHUNK)
        warm = bytes_fetched()
    assert before is not None and cold is not None and warm is not None
    assert cold - before >= CHUNK
    assert warm == cold


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
