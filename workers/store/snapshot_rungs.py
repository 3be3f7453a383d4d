"""Snapshots kept on local disk every so many events folded (rungs), so that an `as_of`
read, a diff or the served side of a replay rebuilds from one at most that many events
before its point.

Redis keeps the ladder (the newest few, hourly, daily: `Ladder` in workers/store/ports.py), and
loads all of it at every start. A log written fast has one hourly rung for all of it: an
`as_of` read in the middle of a long log written in minutes folded half of it from zero.
Rungs kept in Redis made that much shorter but cost Redis's memory and slowed every cold
start; on disk a rung costs disk only.

A rung is a snapshot the store published, saved with the snapshots it loads on (its base,
and a small delta's delta), each file once: `<directory>/<tenant>/<epoch>-v<format>/<position>`,
with an index (`rungs.json`) of the rungs, the events each had folded, and each file's base.
Each file is kept without its memories' texts and concepts, which the rungs of an epoch
share (workers/store/rung_rows.py): without that, every full snapshot kept held all the
texts of the log before it again.
Whichever process publishes (a fold job) saves one, under a lock of the tenant's directory;
any process given the same directory reads them (the API's `as_of` reads, the workers'
replays and diffs). At most `kept` rungs, and all tenants' files within `budget` bytes
(ASSOCMEM_DISK_BUDGET, which covers the local copy of the newest snapshot too). Past the
budget the oldest files kept unpacked are compressed first; past either bound then, the
rung whose removal leaves the shortest run of events between its neighbours goes, so they
thin out evenly over the log (rather than oldest first, which would make as-of reads into
the early log fold from zero).
An erasure drops them all (`drop`), and the rungs of another epoch of the log (a history
rewritten) or of another snapshot format (`SNAPSHOT_FORMAT`: they could not be loaded) are
never read, and go at the next save. The files hold what users wrote: the directory is its owner's.

A rung's files are kept unpacked while the budget allows (engine/snapshot/frames.py,
`UNPACKED_MAGIC`), about 2.5 times the disk of compressed, and mapped copy-on-write to be
loaded: a load's arrays are views of the page cache, not decompressed into memory the
process has to touch first. Files kept compressed (over the budget, or by a version
before) are read as they are; the rows the rungs share are kept compressed whatever the
budget (rung_rows.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import mmap
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import orjson

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import SNAPSHOT_FORMAT, RowsApart
from assocmem.engine.snapshot.delta import base_of
from assocmem.engine.snapshot.frames import (
    UNPACKED_MAGIC,
    compress_snapshot,
    is_unpacked,
    unpacked_snapshot,
)
from assocmem.engine.snapshot.rows_apart import split_rows
from assocmem.workers.store.ports import SnapshotStore, WrappedSnapshotStore
from assocmem.workers.store.private_paths import private_directory, write_private
from assocmem.workers.store.rung_rows import APART_MAGIC, SharedRows, apart_pieces, read_apart

log = logging.getLogger(__name__)

INDEX = "rungs.json"


@dataclasses.dataclass(frozen=True, slots=True)
class Rungs:
    """One epoch of a tenant's rungs, as its index holds them."""

    folded: dict[Position, int]
    """Per rung, the events folded into it (the store's `folded` count)."""
    bases: dict[Position, Position | None]
    """Per file kept, the snapshot it is a delta of (None: a full one)."""

    def chain(self, position: Position) -> list[Position]:
        """The files a rung loads from: itself, then its bases."""
        chain: list[Position] = []
        at: Position | None = position
        while at is not None and at not in chain:
            chain.append(at)
            at = self.bases.get(at)
        return chain

    def thinned(self, kept: int, fits: Callable[[Rungs], bool] = lambda rungs: True) -> Rungs:
        """At most `kept` rungs (the first and last stay), and few enough that `fits` (a
        disk budget): the one with the shortest run of events between its neighbours goes,
        until both hold, so those left stay even over the log."""
        thinned = self._fewer(kept)
        while len(thinned.folded) > 2 and not fits(thinned):
            thinned = thinned._fewer(len(thinned.folded) - 1)
        return thinned

    def _fewer(self, kept: int) -> Rungs:
        folded = dict(self.folded)
        while len(folded) > max(kept, 2):
            order = sorted(folded)
            gaps = {
                order[n]: folded[order[n + 1]] - folded[order[n - 1]]
                for n in range(1, len(order) - 1)
            }
            del folded[min(gaps, key=lambda p: (gaps[p], p))]
        used = {p for rung in folded for p in self.chain(rung)}
        return Rungs(folded, {p: b for p, b in self.bases.items() if p in used})

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "rungs": [[str(p), n] for p, n in sorted(self.folded.items())],
                "bases": [[str(p), str(b) if b else None] for p, b in sorted(self.bases.items())],
            }
        )

    @classmethod
    def decode(cls, raw: bytes) -> Rungs:
        data = orjson.loads(raw)
        return cls(
            {Position.parse(p): int(n) for p, n in data["rungs"]},
            {Position.parse(p): Position.parse(b) if b else None for p, b in data["bases"]},
        )


class RungStore:
    """Rungs of every tenant under `directory`, one every `stride` events folded."""

    def __init__(
        self,
        directory: Path,
        stride: int,
        kept: int,
        epoch: Callable[[str], int],
        budget: int = 0,
        counted: tuple[Path, ...] = (),
    ) -> None:
        self.directory = directory
        self.stride = stride
        self.kept = kept
        self.budget = budget
        """Bytes every tenant's rungs may take together (0: no bound), with `counted`."""
        self.counted = counted
        """Other directories whose files the budget covers (the local copy of the newest
        snapshot): what they hold leaves the rungs that much less."""
        self._epoch = epoch
        """The tenant's epoch of the log now (EventLog.epoch)."""

    def positions(self, tenant: str) -> list[Position]:
        """The rungs of the log's epoch now, oldest first."""
        return sorted(self._read(self._here(tenant)).folded)

    def folded(self, tenant: str, position: Position) -> int:
        """The events folded into the rung at `position` (0 if there is none)."""
        return self._read(self._here(tenant)).folded.get(position, 0)

    def load(self, tenant: str, position: Position) -> bytes | memoryview | RowsApart | None:
        """A rung's file, or one a rung loads on; None if there is none. One kept unpacked
        is mapped copy-on-write, not read: a load's arrays are views of the page cache, and
        the pages of what a read never looks at (most texts) are never touched. One kept
        without its rows comes with views of the shared rows it names."""
        here = self._here(tenant)
        try:
            with (here / str(position)).open("rb", buffering=0) as file:
                if file.read(len(UNPACKED_MAGIC)) not in (UNPACKED_MAGIC, APART_MAGIC):
                    file.seek(0)
                    return file.read()
                view = memoryview(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY))
            apart = read_apart(view)
            return view if apart is None else SharedRows(here).apart(apart[1], apart[0])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, CorruptSnapshot) as exc:
            log.warning("cannot read the snapshot rung %s of %s: %s", position, tenant, exc)
            return None

    def due(self, tenant: str, folded: int) -> bool:
        """Whether a snapshot of `folded` events is the first past a multiple of the stride
        (no rung is past it yet)."""
        return self._due(self._read(self._here(tenant)), folded)

    def save(
        self,
        tenant: str,
        position: Position,
        blob: bytes,
        base: Position | None,
        folded: int,
        store: SnapshotStore,
        published: bool,
    ) -> None:
        """Save a snapshot of `folded` events as a rung if it is due, with the bases it
        loads on that are not saved yet (from `store`). Undone if `store` no longer holds
        it (`published`) or its base once it is saved: an erasure dropped them meanwhile. A
        failure costs slower `as_of` reads, never a fold: it is logged.

        A snapshot published where a file is kept already, of another base (a fold kept a
        small delta as a rung, then published a delta of the same state there), replaces
        it: the next deltas are taken from what was published, and on the rung's file they
        would load on more deltas than a load applies."""
        kept = self._read(self._here(tenant))
        if not (published and _rebased(kept, position, base)) and not self._due(kept, folded):
            return  # most publishes: no lock taken
        try:
            with self._locked(tenant) as here:
                rungs = self._read(here)
                if published and _rebased(rungs, position, base):
                    bases = dict(rungs.bases)
                    self._save(tenant, here, position, blob, base, bases, store)
                    rungs = self._within_budget(here, Rungs(rungs.folded, bases))
                    self._write(here, rungs)
                    for gone in set(bases) - set(rungs.bases):  # new bases may not fit
                        (here / str(gone)).unlink(missing_ok=True)
                if not self._due(rungs, folded) or position in rungs.folded:
                    return
                bases = dict(rungs.bases)
                updated = rungs  # unless all is saved
                try:
                    self._save(tenant, here, position, blob, base, bases, store)
                    if _held(store, tenant, position, blob, base, published):
                        updated = Rungs({**rungs.folded, position: folded}, bases)
                        updated = self._within_budget(here, updated)
                    self._write(here, updated)
                finally:  # the files of no rung: those thinned out, or of one not saved
                    for gone in set(bases) - set(updated.bases):
                        (here / str(gone)).unlink(missing_ok=True)
        except (OSError, CorruptSnapshot) as exc:
            log.warning("cannot keep the snapshot at %s of %s as a rung: %s", position, tenant, exc)

    def _within_budget(self, here: Path, rungs: Rungs) -> Rungs:
        """`rungs`, at most `kept` of them, their files beside every other tenant's (thinned
        as they save theirs) within the budget: the oldest files kept unpacked are
        compressed first, one at a time, and only if all of them are is a rung thinned out.
        A compressed rung loads slower (decompressed, not mapped), but a rung thinned out
        costs the as-of reads it served a fold of every event back to the one before it."""
        rungs = rungs.thinned(self.kept)
        if not self.budget:
            return rungs
        others = _bytes_under(self.directory, but=here) + SharedRows(here).bytes()
        others += sum(_bytes_under(directory) for directory in self.counted)
        sizes = {f.name: f.stat().st_size for f in here.iterdir() if f.is_file()}

        def fits(candidate: Rungs) -> bool:
            used = sum(sizes.get(str(p), 0) for p in candidate.bases)
            return others + used <= self.budget

        for position in sorted(rungs.bases):
            if fits(rungs):
                break
            name = str(position)
            compressed = _compress_file(here / name)
            if compressed is not None:
                log.info(
                    "snapshot rung file %s compressed to keep within the disk budget: %d -> %d MB",
                    here / name,
                    sizes.get(name, 0) >> 20,
                    compressed >> 20,
                )
                sizes[name] = compressed
        return rungs.thinned(self.kept, fits)

    def _due(self, rungs: Rungs, folded: int) -> bool:
        if self.stride <= 0 or folded <= 0:
            return False
        return folded // self.stride > max(rungs.folded.values(), default=0) // self.stride

    def drop(self, tenant: str) -> None:
        """Every rung of the tenant, of every epoch (an erasure: they hold what it erased).
        Raises if they cannot be removed: an erasure must not end while one remains."""
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.directory / tenant)

    def _save(
        self,
        tenant: str,
        here: Path,
        position: Position,
        blob: bytes,
        base: Position | None,
        bases: dict[Position, Position | None],
        store: SnapshotStore,
    ) -> None:
        """The rung's file and those of the bases it loads on that are not kept yet (a full
        snapshot has a digest; a delta's header names its base), bases first: a delta's rows
        follow its base's in the shared rows."""
        chain = [(position, blob)]
        bases[position] = base
        while base is not None and base not in bases:
            found = store.load(tenant, base)
            if found is None:
                raise CorruptSnapshot(f"its base {base} is no longer published")
            bases[base] = None if store.digest(tenant, base) is not None else base_of(found)
            chain.append((base, found))
            base = bases[base]
        rows = SharedRows(here)
        for at, snapshot in reversed(chain):
            write_private(here / str(at), _kept(rows, snapshot))

    def _here(self, tenant: str) -> Path:
        return self.directory / tenant / f"{self._epoch(tenant)}-v{SNAPSHOT_FORMAT}"

    @contextlib.contextmanager
    def _locked(self, tenant: str) -> Iterator[Path]:
        """The tenant's directory of the epoch now, locked against other writers; those of
        older epochs and snapshot formats are removed."""
        here = self._here(tenant)
        private_directory(self.directory)
        private_directory(here.parent)
        with open(os.open(here.parent / ".lock", os.O_RDWR | os.O_CREAT, 0o600)) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for older in here.parent.iterdir():
                if older.is_dir() and older.name != here.name:
                    shutil.rmtree(older, ignore_errors=True)
            private_directory(here)
            for orphan in here.glob(".*.tmp"):  # of a writer killed mid-write: none else writes
                orphan.unlink(missing_ok=True)
            SharedRows(here).trim()
            yield here

    def _read(self, here: Path) -> Rungs:
        try:
            return Rungs.decode((here / INDEX).read_bytes())
        except FileNotFoundError:
            return Rungs({}, {})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the snapshot rungs' index %s is unreadable (%s): none used", here, exc)
            return Rungs({}, {})

    def _write(self, here: Path, rungs: Rungs) -> None:
        write_private(here / INDEX, [rungs.encode()])


def _bytes_under(directory: Path, but: Path | None = None) -> int:
    """Bytes of the files under `directory` (none if it is missing), those of `but` left out."""
    total = 0
    for root, _, files in os.walk(directory):
        if Path(root) == but:
            continue
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += (Path(root) / name).stat().st_size
    return total


def _rebased(rungs: Rungs, position: Position, base: Position | None) -> bool:
    """Whether a file is kept at `position` of a base other than `base`."""
    return position in rungs.bases and rungs.bases[position] != base


def _held(
    store: SnapshotStore,
    tenant: str,
    position: Position,
    blob: bytes,
    base: Position | None,
    published: bool,
) -> bool:
    """Whether `store` still holds what a rung was saved from: the snapshot it published,
    or the base of one it did not."""
    if published:
        return store.size(tenant, position) == len(blob)
    return base is not None and store.size(tenant, base) > 0


def _kept(rows: SharedRows, blob: bytes | memoryview) -> Iterable[bytes | memoryview]:
    """What to keep of a snapshot: its rest, naming its rows in `rows` (appended there past
    those held), unpacked; the whole snapshot unpacked if its rows cannot be shared: a delta
    on a base kept whole (by a version before the rows were shared), or rows that do not
    line up with those held (never seen: a state of this epoch's log has the same rows)."""
    split = split_rows(blob)
    held = rows.held()
    if split.start > held.rows:
        return unpacked_snapshot(blob)
    span = rows.hold(split, held)
    if span is None:
        log.warning("a snapshot's rows differ from its rungs' in %s: kept whole", rows.here)
        return unpacked_snapshot(blob)
    return apart_pieces(span, [UNPACKED_MAGIC, *split.rest])


def _compress_file(path: Path) -> int | None:
    """The snapshot kept unpacked at `path` compressed in its place (after the header of
    one kept without its rows), as snapshots are published: its size now (None if it is
    compressed already or gone)."""
    try:
        with path.open("rb", buffering=0) as file:
            if file.read(len(UNPACKED_MAGIC)) not in (UNPACKED_MAGIC, APART_MAGIC):
                return None
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    apart = read_apart(view)
                    header = len(view) - len(apart[1]) if apart else 0
                    if not is_unpacked(view[header:]):
                        return None
                    prefix = bytes(view[:header])
                    compressed = compress_snapshot([view[header + len(UNPACKED_MAGIC) :]])
                finally:
                    apart = None
                    view.release()
    except FileNotFoundError:
        return None
    write_private(path, [prefix, compressed])
    return len(prefix) + len(compressed)


class RungSnapshotStore(WrappedSnapshotStore):
    """A SnapshotStore whose rebuilds may also start from `rungs`; everything else is the
    inner store's (its ladder, its latest, what a delta may be published on)."""

    def __init__(self, inner: SnapshotStore, rungs: RungStore) -> None:
        super().__init__(inner)
        self.rungs = rungs

    def load(self, tenant: str, position: Position) -> bytes | memoryview | None:
        """The kept file first where there is one: the same snapshot, mapped rather than
        fetched from Redis and decompressed."""
        return self.rungs.load(tenant, position) or self.inner.load(tenant, position)

    def starts(self, tenant: str) -> list[Position]:
        return sorted({*self.inner.starts(tenant), *self.rungs.positions(tenant)})

    def keeps(self, tenant: str, folded: int) -> bool:
        return self.rungs.due(tenant, folded)

    def folded(self, tenant: str, position: Position) -> int:
        return self.rungs.folded(tenant, position) or self.inner.folded(tenant, position)

    def keep(
        self, tenant: str, blob: bytes, position: Position, base: Position, folded: int
    ) -> None:
        self.rungs.save(tenant, position, blob, base, folded, self.inner, published=False)

    def published(
        self, tenant: str, blob: bytes, position: Position, base: Position | None, folded: int
    ) -> None:
        self.rungs.save(tenant, position, blob, base, folded, self.inner, published=True)

    def dropped(self, tenant: str) -> None:
        self.rungs.drop(tenant)


def with_rungs(
    store: SnapshotStore,
    directory: Path | None,
    stride: int,
    kept: int,
    epoch: Callable[[str], int],
    budget: int = 0,
    counted: tuple[Path, ...] = (),
) -> SnapshotStore:
    """`store`, its rebuilds also starting from rungs in `directory` if set (and a stride),
    all of them and the files under `counted` within `budget` bytes (0: no bound)."""
    if directory is None or stride <= 0:
        return store
    return RungSnapshotStore(store, RungStore(directory, stride, kept, epoch, budget, counted))
