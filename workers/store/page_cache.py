"""Files read ahead into the page cache while their reader starts.

A starting Redis reads its AOF a little at a time, parsing as it goes, so on a cold page
cache (after a reboot, or once other work pushed the file out of memory) the disk waits
for the parser and the parser for the disk: a load took about twice as long as from the
cache. A thread reading the same files ahead keeps the disk busy meanwhile, which brings
the load close to a cached one (`bench/cold_start.py --home`, caches dropped first).

A file found in the cache is not read again: copying it from memory beside Redis's load
and the API's start made a cached start slower. Which it is, a few chunks tell (from its
start, middle and end) before Redis starts reading it: by what the kernel counts as
fetched from storage for them (Linux's task I/O accounting), else by how fast they read,
which a loaded machine blurs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from io import FileIO
from pathlib import Path

CHUNK = 8 << 20
CACHED_SECONDS = 0.004
"""Where the kernel counts no I/O: a chunk read in less comes from memory, not the disk."""
IO_ACCOUNTING = Path("/proc/thread-self/io")
SMALL = 64 << 20
"""Files up to this size are left to Redis: it reads them in well under a second."""


def read_ahead(paths: Iterable[Path]) -> threading.Thread | None:
    """Read those of `paths` that are not in the page cache through, in order, in a
    daemon thread (None if there are none: missing, small or cached)."""
    large = [path for path in paths if _size(path) > SMALL]
    if not large:  # no chunk buffer made for each small Redis a test starts
        return None
    buffer = bytearray(CHUNK)
    cold = [path for path in large if _cold(path, buffer)]
    if not cold:
        return None
    thread = threading.Thread(
        target=_read_through, args=(cold, buffer), name="page-cache", daemon=True
    )
    thread.start()
    return thread


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # missing, or unreadable: Redis will say so itself
        return 0


def _cold(path: Path, buffer: bytearray) -> bool:
    try:
        with path.open("rb", buffering=0) as file:
            size = file.seek(0, 2)
            for offset in (0, size // 2, size - CHUNK):
                file.seek(offset)
                if _from_storage(file, buffer):
                    return True
    except OSError:  # gone meanwhile
        return False
    return False


def _from_storage(file: FileIO, buffer: bytearray) -> bool:
    """Whether reading a chunk at `file`'s position fetched some of it from storage."""
    before = bytes_fetched()
    start = time.perf_counter()
    file.readinto(buffer)
    elapsed = time.perf_counter() - start
    after = bytes_fetched() if before is not None else None
    if before is None or after is None:
        return elapsed >= CACHED_SECONDS
    return after > before


def bytes_fetched() -> int | None:
    """Bytes the calling thread has had fetched from storage so far (None where the kernel
    does not say): a read the page cache served adds none."""
    try:
        with IO_ACCOUNTING.open("rb") as accounting:
            for line in accounting:
                if line.startswith(b"read_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _read_through(paths: list[Path], buffer: bytearray) -> None:
    for path in paths:
        try:
            with path.open("rb", buffering=0) as file:
                while file.readinto(buffer):
                    pass
        except OSError:  # gone meanwhile (an AOF rewrite)
            continue
