"""Rebuilding state from the log: latest snapshot at or before a position, then the events after it.

The same functions serve live reads, `as_of` reads, the fold job and audits, so
a rebuilt state and a served state cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Iterator

from assocmem.engine.errors import CorruptSnapshot, InvalidEvent
from assocmem.engine.events.checked_note import checked_note
from assocmem.engine.events.envelope import Event, decode_event
from assocmem.engine.events.fold import STAGED_AT_MOST, Rejection, fold
from assocmem.engine.events.note_payload import ColumnNote
from assocmem.engine.position import ZERO, Position
from assocmem.engine.snapshot.delta import Decoded, load_snapshot
from assocmem.engine.state.state import State
from assocmem.workers.state.heap import collection_paused
from assocmem.workers.state.log_events import LogEvents, counted_snapshots
from assocmem.workers.store.ports import (
    Entry,
    EventLog,
    SnapshotStore,
    iter_entries,
    latest_snapshot,
    snapshot_position_at_or_before,
    snapshots_at_or_before,
    stray_reason,
)

log = logging.getLogger(__name__)

Progress = Callable[[State], None]


@dataclasses.dataclass(frozen=True, slots=True)
class Rebuild:
    upto: Position | None = None
    """Fold the log up to this position (inclusive); None = to the end."""
    skip_types: frozenset[str] = frozenset()
    """Leave these event types out (forces a fold from zero: snapshots contain them)."""
    from_zero: bool = False
    """Fold every event, whatever snapshots there are (to check them)."""


def events_of(
    log_: EventLog,
    tenant: str,
    upto: Position | None = None,
    keep: Callable[[Position, bytes], bool] | None = None,
    after: Position = ZERO,
) -> Iterator[Event]:
    """Every event of the log after `after` that decodes, in order, up to `upto`; with
    `keep`, only the entries it keeps (by position and bytes) are decoded."""
    for chunk in iter_entries(log_, tenant, after, upto):
        kept = chunk if keep is None else (e for e in chunk if keep(*e))
        yield from each_decoded(kept, frozenset(), [])


def each_decoded(
    entries: Iterable[Entry],
    skip_types: frozenset[str],
    rejections: list[Rejection],
    concept_index: dict[str, int] | None = None,
) -> Iterator[Event | ColumnNote]:
    """The events of `entries`, decoded one at a time as they are asked for, less those of
    `skip_types`; the entries that do not decode are added to `rejections`. With the
    `concept_index` of the state they are folded into, checked notes come as ColumnNotes
    (engine/state/note_columns.py)."""
    for position, raw in entries:
        try:
            event = (
                concept_index is not None and checked_note(raw, position, concept_index)
            ) or decode_event(raw, position)
        except InvalidEvent as exc:
            rejections.append(Rejection(position, stray_reason(raw, position) or str(exc)))
            continue
        if event.type not in skip_types:
            yield event


def decode_entry(raw: bytes, position: Position) -> Event:
    """`decode_event`, with the reason a stray entry (workers/store/ports.py) is no event."""
    try:
        return decode_event(raw, position)
    except InvalidEvent as exc:
        raise InvalidEvent(stray_reason(raw, position) or str(exc)) from exc


def decode_entries(
    entries: Iterable[Entry], skip_types: frozenset[str] = frozenset()
) -> tuple[list[Event], list[Rejection]]:
    rejections: list[Rejection] = []
    return list(each_decoded(entries, skip_types, rejections)), rejections


def fold_log(
    state: State,
    log_: EventLog,
    tenant: str,
    upto: Position | None = None,
    skip_types: frozenset[str] = frozenset(),
    progress: Progress | None = None,
) -> list[Rejection]:
    """Fold every entry after `state.position` (up to `upto`) into `state`."""
    chunks = iter_entries(log_, tenant, state.position, upto)
    return fold_entries(state, chunks, skip_types, progress)


def fold_entries(
    state: State,
    chunks: Iterable[list[Entry]],
    skip_types: frozenset[str] = frozenset(),
    progress: Progress | None = None,
) -> list[Rejection]:
    """Fold chunks of log entries in order; entries at or before `state.position` are skipped.

    One fold over all of them, not one per chunk: a fold indexes its notes in bulk when a
    run of them ends, and a chunk's end is no reason to (a third of the time of a fold of
    commit messages went to indexing chunk after chunk). Each entry is decoded just before
    it is folded, not a chunk ahead: a chunk of decoded commit messages is megabytes, cold
    by the time the fold reached its end (a fold of them went 1.2 times as fast so).

    Checked notes are staged as columns (engine/state/note_columns.py), so `progress` may see
    fewer rows than notes folded: the last ones become rows at the next other event, at
    STAGED_AT_MOST staged notes, or at the end."""
    rejections: list[Rejection] = []

    def events() -> Iterator[Event | ColumnNote]:
        for chunk in chunks:
            if chunk[-1][0] <= state.position:
                continue
            start = state.position
            kept = chunk if chunk[0][0] > start else [e for e in chunk if e[0] > start]
            yield from each_decoded(kept, skip_types, rejections, state.concept_index)
            if state.staged_rows >= STAGED_AT_MOST:  # a bound on what staging holds
                state.flush()
            state.position = max(state.position, chunk[-1][0])  # past entries it skipped
            if progress:
                progress(state)

    with collection_paused():
        rejections += fold(state, events())
    return sorted(rejections, key=lambda r: r.position)


def starting_state(
    store: SnapshotStore,
    tenant: str,
    upto: Position | None,
    keep_base: bool = False,
    known: Decoded | None = None,
) -> State:
    """The newest snapshot (at or before `upto`) decoded, or an empty state. `keep_base`:
    for a publisher, which takes its next delta from it; others drop it (it holds the
    base's counts matrix, tens of MB). `known`: the store's full snapshot at a position,
    decoded ahead (workers/state/snapshot_cache.py): taken if it is the latest or its base."""
    if known is not None and upto is None and store.latest_position(tenant) == known[0]:
        return _marked(known[1], keep_base)
    if upto is None:
        latest = latest_snapshot(store, tenant)
        found: Iterable[tuple[Position, bytes]] = [latest] if latest is not None else []
    else:
        found = snapshots_at_or_before(store, tenant, upto)
    for position, blob in found:
        try:
            with collection_paused():
                state = load_snapshot(blob, lambda base: store.load(tenant, base), known=known)
        except CorruptSnapshot as exc:
            log.warning("snapshot %s of %s is unreadable (%s)", position, tenant, exc)
            continue
        return _marked(state, keep_base)
    return State()


def _marked(state: State, keep_base: bool) -> State:
    if not keep_base:
        state.drop_marks()
    return state


def rebuild(
    log_: EventLog,
    store: SnapshotStore,
    tenant: str,
    spec: Rebuild = Rebuild(),
    progress: Progress | None = None,
) -> State:
    fresh = spec.skip_types or spec.from_zero
    state = State() if fresh else starting_state(store, tenant, spec.upto)
    if progress:
        progress(state)  # where the fold starts from, then after each chunk
    fold_log(state, log_, tenant, spec.upto, spec.skip_types, progress)
    return state


def folds_on(
    state: State, store: SnapshotStore, tenant: str, upto: Position, skip_types: frozenset[str]
) -> bool:
    """Whether folding `state` on to `upto` folds no more events than `rebuild` would: it is
    at or before `upto`, and no older than the snapshot a rebuild would start from (which
    it would also have to load; none without `skip_types`, which fold from zero)."""
    if state.position > upto:
        return False
    start = None if skip_types else snapshot_position_at_or_before(store, tenant, upto)
    return start is None or state.position >= start


def log_share(
    log_: EventLog,
    store: SnapshotStore,
    tenant: str,
    upto: Position | None,
    report: Callable[[float], None],
    after: Position = ZERO,
) -> Callable[[Position], None]:
    """Report how far through the log (its entries after `after`, up to `upto`) a position
    is, 0 to 1, in events (workers/state/log_events.py)."""
    last = upto or log_.last_position(tenant)
    if last is None or not log_.entries(tenant, after, last, 1):
        return lambda position: report(1.0)
    events = LogEvents(log_, tenant, last, counted_snapshots(log_, store, tenant, last))
    begun = events.at(after.ms) if after != ZERO else 0.0
    span = events.total - begun if events.total > begun else 1.0
    return lambda position: report(min(1.0, max(0.0, (events.at(position.ms) - begun) / span)))
