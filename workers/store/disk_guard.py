"""An event log that appends only while its disks have room (workers/store/disk_space.py):
every append of the pipeline (the API's, consolidation's, an import's) passes here, so none
can fill the disk under Redis. Everything else is the inner log's: reads, and the small
bookkeeping writes (fold flags, dead letters, erasure's rewrites, which free space)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assocmem.engine.position import Position
from assocmem.workers.store.disk_space import DiskSpace
from assocmem.workers.store.ports import Appended, Entry, EventLog

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


class DiskGuardedLog:
    def __init__(self, inner: EventLog, disk: DiskSpace) -> None:
        self.inner = inner
        self.disk = disk

    def append(self, tenant: str, events: list[Event]) -> list[Appended]:
        self.disk.check()
        return self.inner.append(tenant, events)

    def append_at(self, tenant: str, entries: list[Entry]) -> bool:
        self.disk.check()
        return self.inner.append_at(tenant, entries)

    def append_raw(self, tenant: str, raw: bytes) -> Position:
        self.disk.check()
        return self.inner.append_raw(tenant, raw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def with_disk_guard(log: EventLog, disk: DiskSpace) -> EventLog:
    """`log`, its appends refused while `disk` is short of room; `log` itself if it watches
    no disk."""
    return DiskGuardedLog(log, disk) if disk.paths else log  # type: ignore[return-value]
