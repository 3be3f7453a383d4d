"""A local copy of the API tenant's newest full snapshot, so that a starting API decodes it
while Redis is still loading its data.

Redis answers nothing until it has loaded its files (seconds, for a large log), and the
API then needed about as long again to fetch and decode the latest snapshot. With a copy
on local disk the API decodes the copy meanwhile; once Redis answers, the copy is used
only if it is the snapshot Redis holds at its position: the same SHA-256 as the one
published with it (`SnapshotStore.digest`), or, for a snapshot published before digests
were kept, the same bytes. A copy that is stale, comes from another Redis or predates an
erasure is never served: it is replaced.

Written on every full snapshot published through `CachingSnapshotStore` (the workers' fold
job, an erasure's republish) and by the API's preload when the copy is missing or stale;
removed when the tenant's snapshots are dropped (every erasure drops them). The files hold
what users wrote: the directory is its owner's only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from pathlib import Path

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.position import Position
from assocmem.engine.snapshot.delta import load_full
from assocmem.engine.state.state import State
from assocmem.workers.runtime.redis_server import is_alive
from assocmem.workers.state.rebuild import starting_state
from assocmem.workers.store.ports import (
    SnapshotStore,
    WrappedSnapshotStore,
    published_snapshot,
    snapshot_digest,
)
from assocmem.workers.store.private_paths import private_directory

log = logging.getLogger(__name__)

MAGIC = b"assocmem-snapshot-copy 2"
HEADER_AT_MOST = 1024
"""Bytes of the header line: magic, position, size and digest."""


@dataclasses.dataclass(slots=True)
class Copy:
    position: Position
    digest: str
    """`snapshot_digest` of the bytes it was decoded from."""
    state: State | None
    """None once `latest_state` found the copy stale and let its state go."""


class SnapshotCache:
    """One tenant's copy, `<directory>/<tenant>.snapshot`: a header line, then the blob."""

    def __init__(self, directory: Path, tenant: str) -> None:
        self.directory = directory
        self.tenant = tenant
        self.path = directory / f"{tenant}.snapshot"

    def read(self) -> tuple[Position, str, bytes] | None:
        """The copy's position, digest and bytes; None if there is none or it is not whole."""
        try:
            # Unbuffered: a buffered reader joins what it buffered with the rest, a second
            # copy of the blob, as large as the snapshot
            with self.path.open("rb", buffering=0) as file:
                header, blob = file.readline(HEADER_AT_MOST).rstrip(b"\n"), file.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read the snapshot copy %s: %s", self.path, exc)
            return None
        try:
            magic, position, size, digest = header.rsplit(b" ", 3)
            if magic == MAGIC and int(size) == len(blob):
                return Position.parse(position.decode()), digest.decode(), blob
        except ValueError:
            pass
        log.warning("the snapshot copy %s is not whole; ignored", self.path)
        return None

    def decoded(self) -> Copy | None:
        """The copy decoded, or None (a copy that does not decode is removed)."""
        found = self.read()
        if found is None:
            return None
        position, digest, blob = found
        try:
            return Copy(position, digest, load_full(blob))
        except CorruptSnapshot as exc:
            log.warning("the snapshot copy %s does not decode (%s); removed", self.path, exc)
            self.remove()
            return None

    def keep(
        self, store: SnapshotStore, position: Position, blob: bytes, digest: str | None = None
    ) -> None:
        """Make the copy `store`'s full snapshot at `position` (`blob`, whose digest the store
        may have given), and remove it again if the store no longer holds that snapshot once
        it is written: an erasure that dropped it meanwhile. (Its drop removes the copy after
        Redis's keys, so whatever the order, one of the two removes a copy of what it erased.)"""
        digest = digest or snapshot_digest(blob)
        self.write(position, blob, digest)
        held = store.digest(self.tenant, position)
        if store.size(self.tenant, position) == 0 or held not in (None, digest):
            self.remove()

    def write(self, position: Position, blob: bytes, digest: str) -> None:
        """Replace the copy; never half-written (a temporary file renamed over it)."""
        header = b"%s %s %d %s\n" % (MAGIC, str(position).encode(), len(blob), digest.encode())
        temporary = self.directory / f".{self.tenant}.{os.getpid()}.tmp"
        try:
            private_directory(self.directory)
            self._remove_orphans()
            with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
                f.write(header)
                f.write(blob)
            temporary.replace(self.path)
        except OSError as exc:  # a full disk costs a slower start, never a publish
            log.warning("cannot write the snapshot copy %s: %s", self.path, exc)
            with contextlib.suppress(OSError):  # one left is stale, and never served so
                temporary.unlink(missing_ok=True)
                self.remove()

    def remove(self) -> None:
        """Raises if the copy cannot be removed: an erasure must not end while it remains."""
        self.path.unlink(missing_ok=True)

    def _remove_orphans(self) -> None:
        """Temporary files of writers killed mid-write (hundreds of MB each at scale)."""
        for orphan in self.directory.glob(f".{self.tenant}.*.tmp"):
            with contextlib.suppress(ValueError, OSError):
                pid = int(orphan.name.rsplit(".", 2)[-2])
                if pid != os.getpid() and not is_alive(pid):
                    orphan.unlink(missing_ok=True)


def latest_state(store: SnapshotStore, cache: SnapshotCache, early: Copy | None) -> State:
    """The cache's tenant's latest snapshot decoded (as `starting_state` decodes it), on
    `early` (the copy, decoded ahead) if that is the store's snapshot at its position;
    else the copy is replaced by the snapshot's full base, or removed if there is none."""
    tenant = cache.tenant
    if early is not None and not _same(store, tenant, early):
        early.state = None  # let go first: not two large states at once
    known = (early.position, early.state) if early is not None and early.state is not None else None
    state = starting_state(store, tenant, None, keep_base=True, known=known)
    if known is None or state is not known[1]:
        base = state.base.position if state.base else None
        blob = published_snapshot(store, tenant, base) if base else None
        if base and blob:
            cache.keep(store, base, blob, store.digest(tenant, base))
        else:
            cache.remove()
    state.drop_marks()
    return state


def _same(store: SnapshotStore, tenant: str, copy: Copy) -> bool:
    published = store.digest(tenant, copy.position)
    if published is None:  # published before digests were kept, or gone: the bytes tell
        blob = published_snapshot(store, tenant, copy.position)
        return blob is not None and snapshot_digest(blob) == copy.digest
    return published == copy.digest


class CachingSnapshotStore(WrappedSnapshotStore):
    """A SnapshotStore that keeps `cache` equal to its tenant's newest full snapshot."""

    def __init__(self, inner: SnapshotStore, cache: SnapshotCache) -> None:
        super().__init__(inner)
        self.cache = cache

    def published(
        self, tenant: str, blob: bytes, position: Position, base: Position | None, folded: int
    ) -> None:
        if base is None and tenant == self.cache.tenant:
            # The digest the store made as it published: the blob is not hashed twice
            self.cache.keep(self.inner, position, blob, self.inner.digest(tenant, position))

    def dropped(self, tenant: str) -> None:
        if tenant == self.cache.tenant:
            self.cache.remove()  # a copy written meanwhile goes too (`keep`)


def cached_store(store: SnapshotStore, directory: Path | None, tenant: str) -> SnapshotStore:
    """`store`, keeping a copy of `tenant`'s newest full snapshot in `directory` if set."""
    return CachingSnapshotStore(store, SnapshotCache(directory, tenant)) if directory else store
