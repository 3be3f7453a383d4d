"""Free space on the disks the pipeline writes to, checked before it writes, so that writes
wait for room instead of filling a disk under Redis.

A Redis whose AOF write fails with `appendfsync always` exits (it cannot keep a write it
has already applied), and `up` gave up after four such exits: a full disk took reads down
too. Refusing writes while a watched disk has less than `min_free` left keeps the AOF's
own writes far from the end of the disk; reads go on from the state already held.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from assocmem.workers.errors import DiskLow

log = logging.getLogger(__name__)

MB = 1024 * 1024
CHECK_EVERY = 1.0
"""Seconds a measure is trusted: statvfs is cheap, but a write path should not pay it per
event of a burst; space freed shows within this."""


@dataclass(frozen=True, slots=True)
class Room:
    path: Path
    free: int
    """Bytes an unprivileged writer may still use on `path`'s disk."""


class DiskSpace:
    """Watches the disks of `paths`; `min_free_mb` 0 (or no path) watches nothing."""

    def __init__(
        self,
        paths: Iterable[Path],
        min_free_mb: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.paths = tuple(paths) if min_free_mb > 0 else ()
        self.min_free = min_free_mb * MB
        self.clock = clock
        self._lock = threading.Lock()
        self._measured: tuple[float, tuple[Room, ...]] | None = None
        self._was_low = False

    def rooms(self) -> tuple[Room, ...]:
        """Free space of each watched disk, measured at most CHECK_EVERY seconds ago."""
        now = self.clock()
        with self._lock:
            if self._measured is None or now - self._measured[0] >= CHECK_EVERY:
                self._measured = (now, tuple(_room(p) for p in self.paths))
            return self._measured[1]

    def shortage(self, needed: int = 0) -> str | None:
        """Why a write of `needed` bytes must wait, or None if every disk has room for it
        and `min_free` beyond."""
        for room in self.rooms():
            if room.free - needed < self.min_free:
                wanted = f" and {needed / MB:.0f} MB to write" if needed else ""
                said = (
                    f"the disk of {room.path} has {room.free / MB:.0f} MB free: writes wait "
                    f"until {self.min_free / MB:.0f} MB are free (ASSOCMEM_MIN_FREE_MB){wanted}"
                )
                if not needed:
                    self._changed(low=True, said=said)
                return said
        if not needed:
            self._changed(low=False, said="")
        return None

    def check(self, needed: int = 0) -> None:
        """Raise DiskLow (a 507, Retry-After) unless there is room for `needed` bytes."""
        said = self.shortage(needed)
        if said is not None:
            raise DiskLow(said)

    def _changed(self, low: bool, said: str) -> None:
        """Log once as the disk fills past the threshold and once as room comes back."""
        if low != self._was_low:
            self._was_low = low
            if low:
                log.warning("%s", said)
            else:
                log.warning("the disks have room again: writes go on")


def _room(path: Path) -> Room:
    """The free space of the disk `path` is (or will be) on: a directory not made yet is on
    its nearest existing parent's."""
    here = path
    while not here.exists() and here != here.parent:
        here = here.parent
    try:
        stats = os.statvfs(here)
    except OSError:  # unreadable: not this check's to refuse writes for
        return Room(path, 2**62)
    return Room(path, stats.f_bavail * stats.f_frsize)
