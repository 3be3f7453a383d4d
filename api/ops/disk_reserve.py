"""Room kept back on the data directory's disk for its Redis: a file `up` makes while there
is room and deletes when Redis exits on a disk filled to its end, so that Redis can start
again (its config, the next part of its AOF) and reads go on while writes wait.

`up` has Redis sync every second once the disk runs short (api/ops/supervisor.py), and
then Redis refuses writes on a full disk instead of exiting; but a disk filled in one
go (a copy of a big file) fills it before the next check, and Redis with `appendfsync
always` exits at its next write."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

MB = 1024 * 1024
RESERVE_FILE = "disk-reserve"
MOST_RESERVED = 64 * MB
"""Enough for Redis to start on a large AOF and take its bookkeeping writes for hours."""


def reserve_bytes(min_free_mb: int) -> int:
    """Half the free space writes wait for, up to MOST_RESERVED (0: none)."""
    return min(MOST_RESERVED, min_free_mb * MB // 2)


class DiskReserve:
    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size

    def keep(self) -> None:
        """Make the reserve if it is missing and the disk has room for it."""
        if not self.size or self.path.exists():
            return
        partial = self.path.with_suffix(".tmp")
        try:
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.posix_fallocate(descriptor, 0, self.size)  # blocks, not a sparse file
            finally:
                os.close(descriptor)
            os.replace(partial, self.path)
        except OSError:  # no room yet: made at a later check
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()

    def release(self) -> bool:
        """Delete the reserve; whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True
