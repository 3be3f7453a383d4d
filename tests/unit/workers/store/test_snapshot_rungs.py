"""Snapshots kept on disk every so many events (workers/store/snapshot_rungs.py): an as-of rebuild
starts from the newest one at or before its point and gets the state a fold from zero
gets; they thin out evenly, and an erasure or a rewritten history leaves none readable."""

from __future__ import annotations

from pathlib import Path

import pytest

from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import (
    SNAPSHOT_FORMAT,
    RowsApart,
    content_hash,
    dump_state,
    load_state,
)
from assocmem.engine.snapshot.frames import UNPACKED_MAGIC, is_unpacked
from assocmem.engine.snapshot.rows_apart import split_rows
from assocmem.engine.state.state import State
from assocmem.workers.jobs import fold_job
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.rebuild import Rebuild, rebuild, starting_state
from assocmem.workers.store import snapshot_rungs
from assocmem.workers.store.memory import InMemoryEventLog, InMemorySnapshotStore
from assocmem.workers.store.ports import Ladder, iter_entries
from assocmem.workers.store.rung_rows import FILES as ROW_FILES
from assocmem.workers.store.rung_rows import SharedRows, Span, read_apart
from assocmem.workers.store.snapshot_rungs import Rungs, RungSnapshotStore, RungStore
from tests.stores import Clock, write

STRIDE = 30
EPOCH_0 = f"0-v{SNAPSHOT_FORMAT}"
"""The directory of a tenant's rungs of the log's first epoch."""


def _runtime(directory: Path) -> Runtime:
    log = InMemoryEventLog()
    # Redis's side keeps only the newest snapshot (and what it loads on), as a log written
    # within an hour keeps one of its hourly rung
    ladder = InMemorySnapshotStore(Ladder(recent=1, hourly=0, daily=0))
    store = RungSnapshotStore(ladder, RungStore(directory, STRIDE, 64, log.epoch))
    return Runtime(Settings(snapshot_every=1), log, store, None, Clock())


def _fill(runtime: Runtime, batches: int) -> list[Position]:
    """Notes in batches of 7, a publish after each (full snapshots, deltas, small deltas)."""
    written = []
    for batch in range(batches):
        notes = [[f"topic{batch}", f"word{n % 5}", f"pair{(batch + n) % 9}"] for n in range(7)]
        written += write(runtime, *notes)
        assert fold_and_publish(runtime, "default", force=True)["published"]
    return written


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    return _runtime(tmp_path / "rungs")


def _rungs(runtime: Runtime) -> RungStore:
    store = runtime.snapshots
    assert isinstance(store, RungSnapshotStore)
    return store.rungs


def test_an_as_of_rebuild_starts_from_the_newest_rung_before_it_and_equals_a_fold_from_zero(
    runtime: Runtime,
) -> None:
    written = _fill(runtime, 20)  # 140 events: a rung past each 30
    rungs = _rungs(runtime).positions("default")
    assert len(rungs) == 4
    kept = runtime.snapshots.positions("default")
    assert kept[0] > rungs[-1]  # Redis's side has none of them
    for upto in [p for p in written if p < kept[0]][3::11]:
        started = starting_state(runtime.snapshots, "default", upto)
        assert started.position == max((r for r in rungs if r <= upto), default=Position(0, 0))
        state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto))
        zero = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto, from_zero=True))
        assert state.position == zero.position == upto
        assert content_hash(state) == content_hash(zero)


def test_a_rung_that_cannot_be_read_gives_way_to_the_one_before_it(runtime: Runtime) -> None:
    written = _fill(runtime, 20)
    rungs = _rungs(runtime).positions("default")
    directory = _rungs(runtime).directory / "default" / EPOCH_0
    (directory / str(rungs[-1])).write_bytes(b"not a snapshot")
    upto = max(p for p in written if p < runtime.snapshots.positions("default")[0])
    assert starting_state(runtime.snapshots, "default", upto).position == rungs[-2]


def test_a_long_fold_keeps_the_rungs_it_passes_not_only_one_at_its_end(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker behind a burst folds tens of thousands of events in one job. The deltas are
    kept though they are over a quarter of their base, which a publish would not take."""
    _fill(runtime, 40)  # 280 events published
    runtime.settings = Settings(snapshot_every=10**6, snapshot_after=10**6)
    before = _rungs(runtime).positions("default")
    written = write(runtime, *[["late", f"word{n}"] for n in range(75)])
    monkeypatch.setattr(  # read in chunks of 5 entries, not of 1,000
        fold_job,
        "iter_entries",
        lambda log, tenant, after: iter_entries(log, tenant, after, batch=5),
    )
    assert not fold_and_publish(runtime, "default")["published"]
    new = [p for p in _rungs(runtime).positions("default") if p not in before]
    assert new == [written[19], written[49]]  # the 300th and the 330th event folded
    state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(new[0]))
    zero = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(new[0], from_zero=True))
    assert content_hash(state) == content_hash(zero)


def test_rungs_are_kept_unpacked_and_mapped_and_one_kept_compressed_is_read_too(
    runtime: Runtime,
) -> None:
    """Mapped, a load's arrays are views of the page cache: no decompression, and no memory
    of its own to touch first (a load at a million events 0.3 s instead of 0.9-1.1 s).
    Rungs written compressed (before they were kept unpacked) are still read."""
    written = _fill(runtime, 12)
    store = _rungs(runtime)
    rungs = store.positions("default")
    directory = store.directory / "default" / EPOCH_0
    files = _rung_files(directory, rows=False)
    assert files and all(read_apart(f.read_bytes()) for f in files)
    assert all(is_unpacked(read_apart(f.read_bytes())[1]) for f in files)  # type: ignore[index]
    loaded = [store.load("default", r) for r in rungs]
    assert all(isinstance(b, RowsApart) and isinstance(b.rest, memoryview) for b in loaded)
    upto = max(p for p in written if p < runtime.snapshots.positions("default")[0])
    zero = content_hash(
        rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto, from_zero=True))
    )
    newest = starting_state(runtime.snapshots, "default", upto)
    assert newest.position == rungs[-1]
    (directory / str(rungs[-1])).write_bytes(dump_state(newest))  # compressed, as before
    assert isinstance(store.load("default", rungs[-1]), bytes)
    assert starting_state(runtime.snapshots, "default", upto).position == rungs[-1]
    assert content_hash(rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto))) == zero
    _fill(runtime, 1)  # a rung that Redis's side holds too is read mapped all the same
    latest = runtime.snapshots.latest_position("default")
    assert latest == store.positions("default")[-1]
    assert isinstance(runtime.snapshots.load("default", latest), RowsApart)


def test_rungs_are_read_by_another_process_given_the_same_directory(
    runtime: Runtime, tmp_path: Path
) -> None:
    _fill(runtime, 12)
    rungs = _rungs(runtime).positions("default")
    other = RungStore(tmp_path / "rungs", STRIDE, 64, runtime.log.epoch)
    assert other.positions("default") == rungs
    store = RungSnapshotStore(InMemorySnapshotStore(), other)  # none of its own
    assert starting_state(store, "default", rungs[-1]).position == rungs[-1]


def test_a_rewritten_history_reads_no_rung_of_before_and_an_erasure_leaves_no_file(
    runtime: Runtime,
) -> None:
    _fill(runtime, 12)
    directory = _rungs(runtime).directory / "default"
    assert _rungs(runtime).positions("default")
    runtime.log.raise_epoch("default")
    assert _rungs(runtime).positions("default") == []
    assert runtime.snapshots.starts("default") == runtime.snapshots.positions("default")
    _fill(runtime, 6)  # a rung of the new epoch: the old epoch's files go
    assert [d.name for d in directory.iterdir() if d.is_dir()] == [f"1-v{SNAPSHOT_FORMAT}"]
    runtime.snapshots.drop("default")
    assert not directory.exists()
    assert _rungs(runtime).positions("default") == []


def test_past_the_most_kept_rungs_thin_out_evenly_keeping_the_first_and_the_last() -> None:
    at = [Position(n, 0) for n in range(10)]
    rungs = Rungs(
        {at[1]: 100, at[3]: 200, at[5]: 250, at[7]: 300, at[9]: 400},
        {at[0]: None, at[1]: at[0], at[3]: at[0], at[5]: at[0], at[7]: at[6], at[6]: None,
         at[9]: at[8], at[8]: None},
    )  # fmt: skip
    thinned = rungs.thinned(4)
    assert sorted(thinned.folded) == [at[1], at[3], at[7], at[9]]  # 250: the shortest run
    thinned = thinned.thinned(2)
    assert sorted(thinned.folded) == [at[1], at[9]]
    assert set(thinned.bases) == {at[0], at[1], at[8], at[9]}  # the bases of those gone go
    assert Rungs.decode(thinned.encode()) == thinned


def test_within_a_disk_budget_rungs_thin_out_evenly_and_still_rebuild_exactly(
    runtime: Runtime,
) -> None:
    """ASSOCMEM_DISK_BUDGET: every tenant's rung files together stay within it (but the
    first and the last of each), thinned as by count; a rebuild from what is left is the
    fold from zero."""
    store = _rungs(runtime)
    _fill(runtime, 20)
    before = store.positions("default")
    store.budget = sum(f.stat().st_size for f in _rung_files(store.directory))  # full now
    written = _fill(runtime, 20)
    kept = store.positions("default")
    assert kept[0] == before[0] and kept[-1] > before[-1], "the first and the newest stay"
    assert sum(f.stat().st_size for f in _rung_files(store.directory)) <= store.budget
    upto = max(p for p in written if p < runtime.snapshots.positions("default")[0])
    state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto))
    zero = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto, from_zero=True))
    assert content_hash(state) == content_hash(zero)


def test_past_the_disk_budget_older_rungs_are_compressed_before_any_is_thinned_out(
    tmp_path: Path,
) -> None:
    """A budget the rungs fit compressed but not unpacked keeps every rung a budget of no
    bound keeps: the oldest files are compressed, the newest stays mapped, and a rebuild
    from a compressed rung is the fold from zero."""
    unbounded, bounded = _runtime(tmp_path / "unbounded"), _runtime(tmp_path / "bounded")
    _fill(unbounded, 40)
    written = _fill(bounded, 20)
    store = _rungs(bounded)
    store.budget = sum(f.stat().st_size for f in _rung_files(store.directory))  # full now
    written += _fill(bounded, 20)
    assert _folded(store) == _folded(_rungs(unbounded)), "none thinned out"
    assert sum(f.stat().st_size for f in _rung_files(store.directory)) <= store.budget
    directory = store.directory / "default" / EPOCH_0
    heads = {p: _snapshot_head(directory / str(p)) for p in store.positions("default")}
    assert heads[min(heads)] != UNPACKED_MAGIC, "the oldest is compressed"
    assert heads[max(heads)] == UNPACKED_MAGIC, "the newest is still mapped"
    after_oldest = max(p for p in written if p < store.positions("default")[1])
    assert starting_state(bounded.snapshots, "default", after_oldest).position == min(heads)
    state = rebuild(bounded.log, bounded.snapshots, "default", Rebuild(after_oldest))
    zero = rebuild(bounded.log, bounded.snapshots, "default", Rebuild(after_oldest, from_zero=True))
    assert content_hash(state) == content_hash(zero)


def test_the_copy_of_the_newest_snapshot_takes_its_share_of_the_disk_budget(
    runtime: Runtime, tmp_path: Path
) -> None:
    """The budget covers the local copy of the newest snapshot too: the rungs get the rest."""
    store = _rungs(runtime)
    _fill(runtime, 20)
    rungs = sum(f.stat().st_size for f in _rung_files(store.directory))
    copy = tmp_path / "snapshot-cache"
    copy.mkdir()
    (copy / "default.snapshot").write_bytes(b"s" * (rungs // 2))
    store.budget, store.counted = 2 * rungs, (copy,)
    _fill(runtime, 30)
    assert sum(f.stat().st_size for f in _rung_files(store.directory)) + rungs // 2 <= 2 * rungs


def _snapshot_head(path: Path) -> bytes:
    """The first bytes of the snapshot a rung file holds, after the header naming its rows."""
    apart = read_apart(path.read_bytes())
    assert apart is not None
    return bytes(apart[1][:8])


def _folded(store: RungStore) -> list[int]:
    """The events folded into each of the tenant's rungs, oldest first."""
    return [store.folded("default", p) for p in store.positions("default")]


def _rung_files(directory: Path, rows: bool = True) -> list[Path]:
    """The files of rungs under `directory`, and those of the rows they share (`rows`)."""
    return [
        f
        for f in directory.rglob("*")
        if f.is_file() and (f.name[0].isdigit() or (rows and f.name in ROW_FILES))
    ]


def test_a_disk_budget_reads_as_people_write_it() -> None:
    from assocmem.workers.runtime.settings import load_settings

    assert load_settings({"ASSOCMEM_DISK_BUDGET": "3G"}).disk_budget == 3 * 1024**3
    assert load_settings({"ASSOCMEM_DISK_BUDGET": "500MB"}).disk_budget == 500 * 1024**2
    assert load_settings({"ASSOCMEM_DISK_BUDGET": "0"}).disk_budget == 0
    assert load_settings({}).disk_budget == 1024**3
    with pytest.raises(Exception, match="ASSOCMEM_DISK_BUDGET"):
        load_settings({"ASSOCMEM_DISK_BUDGET": "lots"})


def test_no_directory_or_no_stride_keeps_none(tmp_path: Path) -> None:
    from assocmem.workers.store.snapshot_rungs import with_rungs

    inner = InMemorySnapshotStore()
    assert with_rungs(inner, None, STRIDE, 64, lambda tenant: 0) is inner
    assert with_rungs(inner, tmp_path, 0, 64, lambda tenant: 0) is inner


@pytest.mark.parametrize("published", [True, False])
def test_a_snapshot_dropped_while_it_was_saved_is_not_kept(tmp_path: Path, published: bool) -> None:
    """An erasure that dropped the snapshots meanwhile: the store no longer holds the one
    published, or the base of the one kept unpublished."""
    rungs = RungStore(tmp_path, 1, 64, lambda tenant: 0)
    store = InMemorySnapshotStore()
    base = None if published else Position(4, 0)
    rungs.save("default", Position(5, 0), dump_state(State()), base, 10, store, published)
    assert rungs.positions("default") == []
    assert {p.name for p in (tmp_path / "default" / EPOCH_0).iterdir()} <= {"rungs.json"}


def test_between_two_publishes_the_fold_keeps_a_delta_unpublished_as_a_rung(
    runtime: Runtime,
) -> None:
    """While writes stream in, a worker publishes seldom at scale (publishing takes at most
    its share of the time): the folds between keep rungs of their own."""
    _fill(runtime, 20)  # 140 events published, the last a full snapshot
    runtime.settings = Settings(snapshot_every=10**6, snapshot_after=10**6)
    written = []
    for batch in range(6):  # the 4th folds past 150 events: a delta of the base at 140
        written += write(runtime, *[[f"late{batch}", f"word{n}"] for n in range(3)])
        assert not fold_and_publish(runtime, "default")["published"]
    newest = _rungs(runtime).positions("default")[-1]
    assert newest == written[11] and newest not in runtime.snapshots.positions("default")
    upto = written[-1]
    assert starting_state(runtime.snapshots, "default", upto).position == newest
    state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto))
    zero = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto, from_zero=True))
    assert content_hash(state) == content_hash(zero)


@pytest.mark.parametrize("published", [12, 17, 21])  # batches: the level is a delta then
def test_a_rung_kept_between_publishes_loads_on_the_full_snapshot_alone(
    tmp_path: Path, published: int
) -> None:
    """Not on a small delta's delta as well: a third file to load, and deltas grow with every
    change since the full snapshot, so an as-of read at a million events took a second more."""
    runtime = _runtime(tmp_path / "rungs")
    _fill(runtime, published)
    runtime.settings = Settings(snapshot_every=10**6, snapshot_after=10**6)
    store = _rungs(runtime)
    before = set(store.positions("default"))
    for batch in range(12):
        write(runtime, *[[f"late{batch}", f"word{n}"] for n in range(3)])
        assert not fold_and_publish(runtime, "default")["published"]
    rungs = store._read(store._here("default"))
    new = [p for p in store.positions("default") if p not in before]
    assert new and all(len(rungs.chain(p)) == 2 for p in new)


def test_what_a_writer_killed_mid_write_left_goes_at_the_next_save(runtime: Runtime) -> None:
    _fill(runtime, 6)
    directory = _rungs(runtime).directory / "default" / EPOCH_0
    orphan = directory / ".1796000000000-0.4242.tmp"  # hundreds of MB at a million events
    orphan.write_bytes(b"half a snapshot")
    _fill(runtime, 6)
    assert not orphan.exists()
    assert not list(directory.glob(".*"))


def test_every_rung_loads_as_itself_where_a_publish_lands_on_a_rung_kept_mid_fold(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold keeps a rung as it passes a mark, and may publish at that very position
    another snapshot of the same state (a delta where the rung is a small delta): later
    rungs are taken from what was published. Were they saved on the rung's file, some
    would load on more deltas than a load applies, and not load at all."""
    _fill(runtime, 20)
    monkeypatch.setattr(  # read in chunks of 5 entries: a chunk ends on each mark
        fold_job,
        "iter_entries",
        lambda log, tenant, after: iter_entries(log, tenant, after, batch=5),
    )
    for batch in range(30):
        write(runtime, *[[f"late{batch}", f"word{n}", f"pair{n % 3}"] for n in range(10)])
        assert fold_and_publish(runtime, "default", force=True)["published"]
    kept = _rungs(runtime).positions("default")
    assert len(kept) > 10
    for rung in kept:
        assert starting_state(runtime.snapshots, "default", rung).position == rung


def test_the_rungs_hold_each_memory_s_text_once_however_many_there_are(
    runtime: Runtime,
) -> None:
    """Every full snapshot kept held all the texts written before it again: at a million
    events, most of the rungs' disk. Now the rungs share one copy of each row."""
    _fill(runtime, 40)
    store = _rungs(runtime)
    directory = store.directory / "default" / EPOCH_0
    assert len(store.positions("default")) >= 8
    latest = starting_state(runtime.snapshots, "default", store.positions("default")[-1])
    texts = b"".join(memory.text.encode() for memory in latest.rows)
    held = SharedRows(directory).held()
    shared = SharedRows(directory).apart(b"", Span((0, held.text), (0, held.concepts)))
    assert bytes(shared.text) == texts
    marker = b"topic3 word0 pair3"  # one memory's text
    assert texts.count(marker) == 1
    assert not any(marker in f.read_bytes() for f in _rung_files(directory, rows=False))


def test_rows_a_writer_killed_mid_append_left_are_cut_off_at_the_next_save(
    runtime: Runtime,
) -> None:
    _fill(runtime, 12)
    directory = _rungs(runtime).directory / "default" / EPOCH_0
    for name in ("rows.text", "rows.concepts", "rows.starts", "rows.chunks"):
        with (directory / name).open("ab") as file:
            file.write(b"\x07" * 40)  # appended, and the count held not yet written
    written = _fill(runtime, 12)
    held = SharedRows(directory).held()
    assert (directory / "rows.text").stat().st_size == held.text_stored
    assert (directory / "rows.concepts").stat().st_size == held.concepts_stored
    assert (directory / "rows.chunks").stat().st_size == 32 * held.chunks
    upto = max(p for p in written if p < runtime.snapshots.positions("default")[0])
    state = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto))
    zero = rebuild(runtime.log, runtime.snapshots, "default", Rebuild(upto, from_zero=True))
    assert content_hash(state) == content_hash(zero)


def test_a_snapshot_whose_rows_differ_from_those_held_is_kept_whole(tmp_path: Path) -> None:
    """Never seen (the fold only appends rows), but rows that do not line up must not be
    read as another snapshot's: such a rung is kept with its own rows."""
    from assocmem.engine.events.fold import fold_from_zero
    from tests.unit.engine.make_events import written as note

    rows = SharedRows(tmp_path)
    first = fold_from_zero([note(1, ["a", "b"]), note(2, ["b", "c"])])
    other = fold_from_zero([note(1, ["a"], text="another text"), note(2, ["c"]), note(3, ["d"])])
    assert rows.hold(split_rows(dump_state(first))) is not None
    assert rows.hold(split_rows(dump_state(other))) is None
    store = RungStore(tmp_path / "rungs", 1, 64, lambda tenant: 0)
    inner = InMemorySnapshotStore()
    for state in (first, other):
        blob = dump_state(state)
        assert inner.publish("default", blob, state.position, inner.latest_position("default"))
        store.save("default", state.position, blob, None, 2 if state is first else 3, inner, True)
    kept = store.load("default", other.position)
    assert isinstance(kept, memoryview)  # whole
    assert content_hash(load_state(kept)) == content_hash(other)


def test_a_delta_on_a_base_kept_whole_by_a_version_before_is_kept_whole_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rungs kept before the rows were shared hold their rows: a delta saved on one has
    none to follow yet, and is kept whole too, until a full snapshot starts the shared rows."""
    from assocmem.engine.events.fold import fold, fold_from_zero
    from assocmem.engine.snapshot.delta import encode_delta, load_snapshot
    from tests.unit.engine.make_events import written as note

    state = fold_from_zero([note(1, ["a", "b"]), note(2, ["b", "c"])])
    base = dump_state(state)
    state.mark_base()
    fold(state, [note(3, ["c", "d"])])
    rows = SharedRows(tmp_path)
    with caplog.at_level("WARNING"):
        kept = b"".join(snapshot_rungs._kept(rows, encode_delta(state)))
    assert not caplog.records and rows.held().rows == 0
    assert read_apart(kept) is None and is_unpacked(kept)
    assert content_hash(load_snapshot(kept, lambda _: base)) == content_hash(state)


def test_rungs_of_another_snapshot_format_are_never_read_and_go_at_the_next_save(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version that folds a log into another state (or lays it out otherwise) bumps the
    format: rungs kept before cannot be loaded, and rungs are saved only past the newest
    kept, so they would stand in the way of every as-of read into the log they cover."""
    _fill(runtime, 12)
    store = _rungs(runtime)
    assert store.positions("default")
    monkeypatch.setattr(snapshot_rungs, "SNAPSHOT_FORMAT", SNAPSHOT_FORMAT + 1)
    assert store.positions("default") == []
    _fill(runtime, 6)
    names = [d.name for d in (store.directory / "default").iterdir() if d.is_dir()]
    assert names == [f"0-v{SNAPSHOT_FORMAT + 1}"]
