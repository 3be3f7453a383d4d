"""The fold job: fold a tenant's log after its latest snapshot and publish the next snapshot.

A full snapshot is the whole state (tens of MB at 50,000 memories); the job publishes a
delta from the last full one (engine/snapshot/delta.py) while the change is small beside
it, and a small delta of the last such delta while that is smaller still. Publishing
even a delta for every few events (a read's access counts arrive every 2 s) would keep a
core busy encoding and Redis busy rewriting its AOF, next to the readers. So the job folds
every tail it is given, but publishes once `snapshot_every` events have gathered,
or once the oldest of them has waited `snapshot_after` seconds; readers fold the
tail themselves and never wait for a snapshot. Under a stream of events, publishing
takes at most `snapshot_share` of the worker's time: past `snapshot_every` events, the
next publish waits until the worker has had that much time for folding since the last.
A folded consolidation is published at once, as is a replacement for a latest snapshot
that cannot be read.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator

from assocmem.engine.position import ZERO, Position
from assocmem.engine.snapshot.codec import dump_state
from assocmem.engine.snapshot.delta import delta_size, encode_delta
from assocmem.engine.state.state import State
from assocmem.workers.runtime.services import Runtime, current_runtime
from assocmem.workers.state.heap import collection_held
from assocmem.workers.state.rebuild import fold_entries, rebuild, starting_state
from assocmem.workers.store.ports import Entry, iter_entries

log = logging.getLogger(__name__)

REBASE_SHARE = 0.25
"""A delta snapshot is published while what changed since its base (rows and concepts added
or touched) is at most this share of the base; then a full snapshot becomes the new base."""
RUNG_SHARE = 1.0
"""REBASE_SHARE for a delta kept unpublished as a rung (`_keep_unpublished`): one that may
not be published yet is still kept. Concepts whose words a note counts again are touched,
so at a million commit messages a delta reached a quarter of its base some 50,000 events
after it, and rungs waited for the next publish, up to 72,000 events apart."""
LEVEL_SHARE = 0.125
"""A small delta (of the last delta of the base) is published while it would hold at most
this share of what a delta of the base may hold (REBASE_SHARE of the base); then a delta of
the base becomes the new level. A delta of the base every time wrote, between two full
snapshots, a number of rows that grows with the square of the publishes; with a level that
is about eight deltas of the base, and small ones of an eighth of it at most, where a
delta of the base grows with every publish up to tens of MB before the next full
snapshot."""
PROGRESS_EVERY = 50_000
"""Events between progress lines of a long fold."""
PUBLISH_ROOM = 5
"""Bytes of disk a publish may take per byte of snapshot: its copy in Redis's AOF, the
local copy of the newest one, and a rung kept unpacked (about 3.3 times)."""
RUNG_ROOM = 4
"""The same for a rung kept unpublished: the rung, unpacked, and some margin."""
ROOM_RETRY = 30
"""Seconds until a fold comes back to publish what the disk had no room for."""


@dataclasses.dataclass(slots=True)
class _Folded:
    state: State
    base: Position
    """Position of the snapshot the state was folded from."""
    unpublished: int = 0
    """Events folded after `base`."""
    before: int = 0
    """Events folded into `base` (the count it was published with)."""
    waiting_since: float | None = None
    """The runtime's clock when the oldest unpublished event was folded."""
    epoch: int = 0
    """Of the log it was folded from: an erasure since makes it stale."""
    published_at: float = 0.0
    """The runtime's clock when the last publish, which this worker made, ended."""
    publish_took: float = 0.0
    """How long it took."""

    def next_publish(self, share: float) -> float:
        """Before this, `snapshot_every` events are not enough to publish: the last publish
        would have taken more than `share` of the time since the one before it ended."""
        return self.published_at + self.publish_took * (1 - share) / share


def _next_mark(memories: int) -> int:
    """The first multiple of PROGRESS_EVERY past `memories`: where the next progress line is."""
    return (memories // PROGRESS_EVERY + 1) * PROGRESS_EVERY


def fold_tenant(tenant: str) -> dict[str, object]:
    """RQ entry point; safe to run twice or concurrently (the publish is a compare-and-set)."""
    return fold_and_publish(current_runtime(), tenant)


def fold_and_publish(runtime: Runtime, tenant: str, force: bool = False) -> dict[str, object]:
    """Fold the tail; publish a snapshot if enough events gathered (or `force`)."""
    # Read the flag's mark before the log and clear it only at the end, if no append raised
    # it meanwhile: a fold killed halfway leaves the flag up, and the scheduler comes back.
    mark = runtime.log.fold_wanted(tenant)
    expected = runtime.snapshots.latest_position(tenant)
    cache: dict[str, _Folded] = runtime.folded
    folded = cache.get(tenant)
    # The state this process folded continues the latest snapshot, unless another worker has
    # published since: reuse it rather than decode the whole snapshot again.
    epoch = runtime.log.epoch(tenant)
    if (
        folded is None
        or folded.epoch != epoch
        or folded.base != (expected or ZERO)
        or not _in_log(runtime, tenant, folded)
    ):
        started = starting_state(runtime.snapshots, tenant, None, keep_base=True)
        folded = _Folded(
            started,
            started.position,  # ZERO if the latest snapshot is unreadable: it is replaced
            epoch=epoch,
            before=runtime.snapshots.folded(tenant, started.position),  # 0 at ZERO
        )
    cache.pop(tenant, None)
    state = folded.state
    start = state.position
    # From the memories it starts with: counted from zero, every job on a state past the
    # first mark logged a line per chunk until its marks caught up
    marks = {"next": _next_mark(len(state.memories))}

    def progress(s: object) -> None:
        memories = len(state.memories) + len(state.note_columns)  # staged notes are not rows yet
        if memories >= marks["next"]:
            log.info("fold %s: %d memories, at %s", tenant, memories, state.position)
            marks["next"] = _next_mark(memories)
        # A rung as the fold passes it, not once at its end: a worker behind a burst (a
        # publish at a million memories takes seconds) folded 74,000 events in one job, and
        # an as-of read between folded as many.
        _keep_unpublished(runtime, tenant, state, folded.before + folded.unpublished)

    def counted(chunks: Iterable[list[Entry]]) -> Iterator[list[Entry]]:
        for chunk in chunks:
            folded.unpublished += len(chunk)
            yield chunk

    consolidated = state.consolidated_at
    chunks = counted(iter_entries(runtime.log, tenant, state.position))
    rejections = fold_entries(state, chunks, progress=progress)  # frozen after it
    runtime.log.add_dead_letters(tenant, rejections)
    cache[tenant] = folded  # only now: a failed fold or dead letter starts again next time
    if folded.unpublished and folded.waiting_since is None:
        folded.waiting_since = runtime.clock()
    replaces = folded.base != (expected or ZERO)  # an unreadable latest snapshot
    # A consolidation rewrote every count: each start of an API would fold it again, where
    # the snapshot holds it
    rewrote = state.consolidated_at != consolidated
    if state.position == folded.base or not (
        force or replaces or rewrote or _due(runtime, tenant, folded)
    ):
        if state.position != folded.base:
            _keep_unpublished(runtime, tenant, state, folded.before + folded.unpublished)
        if state.position == folded.base:
            runtime.log.set_fold_due(tenant, None)
        else:  # the scheduler comes back once the oldest has waited long enough
            assert folded.waiting_since is not None
            due = folded.waiting_since + runtime.settings.snapshot_after
            if folded.unpublished >= runtime.settings.snapshot_every:  # held back by the share
                due = min(due, folded.next_publish(runtime.settings.snapshot_share))
            runtime.log.set_fold_due(tenant, min(due, runtime.log.fold_due(tenant) or due))
        runtime.log.clear_fold_wanted(tenant, mark)
        return {"tenant": tenant, "published": False, "position": str(state.position)}
    short = _no_room(runtime, tenant, expected)
    if short is not None:  # the state stays folded here; the scheduler comes back later
        log.warning("fold %s: not published, %s; trying in %d s", tenant, short, ROOM_RETRY)
        runtime.log.set_fold_due(tenant, runtime.clock() + ROOM_RETRY)
        runtime.log.clear_fold_wanted(tenant, mark)
        return {"tenant": tenant, "published": False, "position": str(state.position)}
    began = runtime.clock()
    with collection_held():
        blob, base, kind = _snapshot_of(runtime, tenant, state)
    total = folded.before + folded.unpublished
    published = runtime.snapshots.publish(tenant, blob, state.position, expected, base, total)
    if published:
        runtime.log.clear_fold_wanted(tenant, mark)
        runtime.log.set_fold_due(tenant, None)
        if kind == "full":
            state.mark_base()
        elif kind == "delta":
            state.mark_level()
        ended = runtime.clock()
        cache[tenant] = _Folded(
            state,
            state.position,
            epoch=epoch,
            before=total,
            published_at=ended,
            publish_took=ended - began,
        )
    else:
        cache.pop(tenant, None)
    log.info(
        "fold %s: %s -> %s, published=%s (%s, %d bytes), rejected=%d",
        tenant,
        start,
        state.position,
        published,
        kind,
        len(blob),
        len(rejections),
    )
    return {
        "tenant": tenant,
        "published": published,
        "position": str(state.position),
        "rejected": len(rejections),
    }


def folded_state(runtime: Runtime, tenant: str) -> State:
    """The tenant's state at the end of its log, as this worker keeps it: folded on (and
    published, if due) as a fold job would, so that a job reading the whole state does not
    decode a snapshot again (at a million memories, most of a consolidation's time). The
    caller reads it and must not change it: the next fold job goes on from it."""
    fold_and_publish(runtime, tenant)
    folded = runtime.folded.get(tenant)
    if folded is None:  # another worker published first: this one keeps nothing
        return rebuild(runtime.log, runtime.snapshots, tenant)
    return folded.state


def _snapshot_of(runtime: Runtime, tenant: str, state: State) -> tuple[bytes, Position | None, str]:
    """The snapshot to publish, the base it is a delta of, and which it is: a small delta
    of the state's level while it is small beside the base, a delta of the base while that
    is, else a full snapshot (and each base must still be kept)."""
    delta = _delta_of(runtime, tenant, state)
    return delta if delta is not None else (dump_state(state), None, "full")


def _delta_of(
    runtime: Runtime, tenant: str, state: State, share: float = REBASE_SHARE, small: bool = True
) -> tuple[bytes, Position, str] | None:
    """`_snapshot_of`'s delta; None where it would be a full snapshot (more than `share` of
    the base changed). `small`: a small delta where one may be, else a delta of the base."""
    base, level = state.base, state.level
    kept = set(runtime.snapshots.positions(tenant))
    if base is None or base.position not in kept:
        return None
    budget = share * (base.rows + base.concepts)
    if delta_size(state) > budget:
        return None
    if small and level is not None and level.position in kept:
        if delta_size(state, level) <= LEVEL_SHARE * budget:
            return encode_delta(state, level), level.position, "small delta"
    return encode_delta(state), base.position, "delta"


def _keep_unpublished(runtime: Runtime, tenant: str, state: State, folded: int) -> None:
    """A snapshot kept for as-of reads though none is published now (workers/store/snapshot_rungs.py):
    while writes stream in, a worker publishes when publishing takes no more than its share
    of the time, which at a million memories is every 100,000 events or more, and an as-of
    read in between folded all of them. Only a delta of the full snapshot (of up to
    RUNG_SHARE of it), never a small delta: a full snapshot waits for a publish, and a
    small delta would load on two files, not one."""
    if not runtime.snapshots.keeps(tenant, folded):
        return
    state.flush()  # between two chunks of a fold, its last notes may still be staged
    with collection_held():
        delta = _delta_of(runtime, tenant, state, RUNG_SHARE, small=False)
    if delta is not None:
        blob, base, _ = delta
        if runtime.disk.shortage(RUNG_ROOM * len(blob)) is None:  # else the next rung
            runtime.snapshots.keep(tenant, blob, state.position, base, folded)


def _no_room(runtime: Runtime, tenant: str, latest: Position | None) -> str | None:
    """Why a snapshot cannot be published now for want of disk, or None. It is measured
    against the latest one's size before it is encoded: at a million memories encoding one
    takes seconds, and a fold comes back every ROOM_RETRY while the disk stays short."""
    size = runtime.snapshots.size(tenant, latest) if latest is not None else 0
    return runtime.disk.shortage(PUBLISH_ROOM * size)


def current_fold(runtime: Runtime, tenant: str) -> State | None:
    """The state this process folded last for `tenant`, if the log has not been rewritten
    since: for a job of this worker to read (jobs run one at a time, folds among them)."""
    folded = runtime.folded.get(tenant)
    if folded is None or folded.epoch != runtime.log.epoch(tenant):
        return None
    return folded.state if _in_log(runtime, tenant, folded) else None


def _in_log(runtime: Runtime, tenant: str, folded: _Folded) -> bool:
    """Whether the log still holds the last event folded (it is not a log rewritten since)."""
    position = folded.state.position
    return position == ZERO or runtime.log.has(tenant, position)


def _due(runtime: Runtime, tenant: str, folded: _Folded) -> bool:
    """Enough events, or the oldest waited long enough: as this process saw them fold, or
    as the worker that folded them before (it may have died since) recorded."""
    settings = runtime.settings
    now = runtime.clock()
    waited = now - (folded.waiting_since if folded.waiting_since is not None else now)
    recorded = runtime.log.fold_due(tenant)
    return (
        (
            folded.unpublished >= settings.snapshot_every
            and now >= folded.next_publish(settings.snapshot_share)
        )
        or waited >= settings.snapshot_after
        or (recorded is not None and recorded <= now)
    )
