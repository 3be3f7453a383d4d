"""The log's history, as the application answers it: how a link got its weight, what
happened to a memory, a replay checked against the snapshots, what changed between two
points, and the dead letters (listed, and appended again once the code reads them)."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.registry import event_type
from assocmem.engine.history.audit import (
    LinkHistory,
    MemoryEvent,
    link_filter,
    link_history,
    may_rate,
    memory_filter,
    memory_history,
    rated_memories,
)
from assocmem.engine.history.link_diff import LinkDifference, link_difference, links_of
from assocmem.engine.history.link_index import LinkIndex, link_index, rated_positions
from assocmem.engine.position import ZERO, Position, just_before
from assocmem.engine.principal import ADMIN, Principal
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import given_terms
from assocmem.workers.app.permissions import require
from assocmem.workers.errors import InvalidRequest, UnknownConcept, UnknownMemory
from assocmem.workers.job_progress import Share
from assocmem.workers.jobs.fold_job import current_fold, fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.state.heap import collection_held
from assocmem.workers.state.log_events import counted_snapshots
from assocmem.workers.state.rebuild import (
    Rebuild,
    decode_entries,
    decode_entry,
    events_of,
    fold_log,
    folds_on,
    log_share,
    rebuild,
)
from assocmem.workers.state.replay_children import SecondHalf, ServedHash
from assocmem.workers.state.replay_progress import ReplayProgress
from assocmem.workers.store.ports import DEFAULT_BATCH, Entry, iter_entries

logger = logging.getLogger(__name__)

REPORT_EVERY = 1000
"""Events between two progress reports of an audit."""


@dataclasses.dataclass(frozen=True, slots=True)
class Verification:
    position: Position
    replayed: str
    """Content hash of the fold from zero."""
    served: str
    """Content hash of the state served at that position (snapshot + tail, or live)."""
    difference: str | None
    """The first link (or count) that differs, when the hashes do."""

    @property
    def matches(self) -> bool:
        return self.replayed == self.served


@dataclasses.dataclass(frozen=True, slots=True)
class Difference:
    first: Position
    second: Position
    links: LinkDifference


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter:
    position: Position
    reason: str
    raw: bytes | None
    """The entry as the log holds it (None once trimmed)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetters:
    letters: list[DeadLetter]
    total: int
    """All the tenant's, listed or not."""


@dataclasses.dataclass(frozen=True, slots=True)
class Resent:
    position: Position
    """The dead letter's position."""
    appended: Position | None
    """Where it was appended again; None if it still cannot be read."""
    reason: str | None


def check_link_names(source: str, target: str) -> dict[str, str]:
    """The two concepts a link audit names, each with the name given for it; InvalidRequest
    if they are one."""
    names = given_terms([source, target])
    if len(names) != 2:
        raise InvalidRequest(
            f"concepts {quoted(source)} and {quoted(target)} are one concept: expected two"
        )
    return names


def unknown_concepts(given: dict[str, str], index: LinkIndex) -> UnknownConcept:
    """The error for a link audit that found nothing, naming the concepts no event up to
    the index's state ever named and the known ones nearest to each."""
    names = [quoted(given[concept]) for concept in index.unknown]
    nearest = [
        (name, ", ".join(map(quoted, near)))
        for name, near in zip(names, index.unknown.values(), strict=True)
        if near
    ]
    message = (
        f"concept {names[0]} is unknown: no event up to {index.position} named it"
        if len(names) == 1
        else f"concepts {names[0]} and {names[1]} are unknown: no event up to"
        f" {index.position} named them"
    )
    if len(names) == 1 and nearest:
        message += f" (the nearest known: {nearest[0][1]})"
    elif nearest:
        message += f" (the nearest known to {'; to '.join(f'{n}: {c}' for n, c in nearest)})"
    return UnknownConcept(message)


FETCHED_AT_MOST = 1 / 3
"""Share of the log a link audit fetches by position rather than read whole: a fetch costs
a few times what an entry of the whole read with its filter costs (a log of ratings
mostly, each one in the index, is read whole)."""
IndexOf = Callable[[str, str, str], LinkIndex | None]
"""(tenant, source, target) -> the link's index in a state at hand (engine/history/link_index.py),
None without one."""


class History:
    def __init__(self, runtime: Runtime, index_of: IndexOf | None = None) -> None:
        self.runtime = runtime
        self._index_of = index_of or self._folded_index

    def link(
        self, principal: Principal, source: str, target: str, progress: Share | None = None
    ) -> LinkHistory:
        """Every event that changed the link between two concepts (either form).

        With a state at hand (the API's served one, a worker's last fold), the entries its
        index names are fetched by position and only the log after it is read; else, or if
        the index names over a third of the log, the whole log is. The ratings among the entries are decoded first, to tell which
        memories naming one concept the fold must hold (`rated_memories`); then all are
        decoded and folded."""
        given = check_link_names(source, target)
        names = list(given)
        with collection_held():
            index = self._index_of(principal.tenant, *names)
            found = self._link(principal.tenant, names, index, progress or _unreported)
        if not found.changes and index is not None and index.unknown:
            raise unknown_concepts(given, index)
        return found

    def _link(
        self, tenant: str, names: list[str], index: LinkIndex | None, report: Share
    ) -> LinkHistory:
        if index is not None and self._fetching_pays(tenant, index):
            found = self._indexed_link(tenant, names, index, report)
            if found is not None:
                return found
        return self._read_link(tenant, names, report)

    def _fetching_pays(self, tenant: str, index: LinkIndex) -> bool:
        return len(index) <= FETCHED_AT_MOST * self.runtime.log.length(tenant)

    def _indexed_link(
        self, tenant: str, names: list[str], index: LinkIndex, report: Share
    ) -> LinkHistory | None:
        """The history from the entries a state's index names and the log after the state;
        None if a rating names a type the audit does not know (then every note counts)."""
        log_, keep = self.runtime.log, link_filter(*names)
        named = [e for e in log_.entries_at(tenant, list(index.positions)) if keep(*e)]
        report(0.25)
        later: list[Entry] = []
        for chunk in iter_entries(log_, tenant, index.position):
            later.extend(entry for entry in chunk if keep(*entry))
        report(0.5)
        ratings = decode_entries([e for e in named + later if may_rate(e[1])])[0]
        rated = rated_memories(ratings, *names)
        if rated is None:
            return None
        held = log_.entries_at(tenant, rated_positions(index, rated))
        entries = sorted(named + held) + later
        decoded = {event.position: event for event in ratings}
        history = link_history(iter(_decoded(entries, decoded)), *names, rated, index)
        report(1.0)
        return history

    def _folded_index(self, tenant: str, source: str, target: str) -> LinkIndex | None:
        """From the state this worker process folds, brought to the log's end first as a
        fold job would (a job runs between folds, never during one): a worker that has not
        folded the tenant yet loads its latest snapshot, seconds where reading the whole log
        took ten at a million events."""
        fold_and_publish(self.runtime, tenant)
        state = current_fold(self.runtime, tenant)
        return link_index(state, source, target) if state is not None else None

    def _read_link(self, tenant: str, names: list[str], report: Share) -> LinkHistory:
        """The history from the whole log, read and filtered."""
        log_ = self.runtime.log
        keep = link_filter(*names)
        snapshots = self.runtime.snapshots
        read = log_share(log_, snapshots, tenant, None, lambda share: report(share / 2))
        entries: list[Entry] = []
        for chunk in iter_entries(log_, tenant, ZERO):
            entries.extend(entry for entry in chunk if keep(*entry))
            read(chunk[-1][0])
        ratings = decode_entries([entry for entry in entries if may_rate(entry[1])])[0]
        rated = rated_memories(ratings, *names)
        # Decoded once: a rating's event is folded as it was read (a tenth of an audit)
        decoded = {event.position: event for event in ratings}
        events: Iterator[Event] = (
            event
            for start in range(0, len(entries), DEFAULT_BATCH)
            for event in _decoded(entries[start : start + DEFAULT_BATCH], decoded)
        )
        folded = log_share(log_, snapshots, tenant, None, lambda share: report(0.5 + share / 2))
        return link_history(_reporting(events, folded), *names, rated)

    def memory(self, principal: Principal, memory_id: str) -> list[MemoryEvent]:
        # nothing touches a memory before its write, whose position is its id
        try:
            written = Position.parse(memory_id)
        except ValueError:
            written = ZERO
        after = just_before(written) if written > ZERO else ZERO
        keep = memory_filter(memory_id)
        events = events_of(self.runtime.log, principal.tenant, keep=keep, after=after)
        found = memory_history(events, memory_id)
        if not found:
            raise UnknownMemory(f"id {memory_id!r} is unknown: expected the id of a written memory")
        return found

    def verify(
        self, principal: Principal, upto: Position | None, progress: Share | None = None
    ) -> Verification:
        """The fold from zero against the state served at `upto` (default: the log's end),
        which is the newest snapshot at or before it plus the events after.

        On Redis, the fold runs in two halves on two cores: from zero to a snapshot kept
        near the middle of the log here, and from that snapshot on in a child. The halves
        join only if the fold from zero reaches that snapshot's very hash; otherwise, and
        whenever the end differs from the served state, the fold from zero goes on here to
        the end, and what it finds is the answer."""
        tenant, log, snapshots = principal.tenant, self.runtime.log, self.runtime.snapshots
        upto = upto or log.last_position(tenant)
        if upto is None:
            raise InvalidRequest(f"the log of {tenant!r} is empty: nothing to replay")
        settings = self.runtime.settings
        in_children = self.runtime.queue_connection is not None  # children read the same Redis
        wanted = in_children or progress is not None  # for the middle, or the progress
        counted = counted_snapshots(log, snapshots, tenant, upto) if wanted else (None, {})
        middle = _middle(counted[1], upto) if in_children else None
        elsewhere = ServedHash(settings, tenant, upto) if in_children else None
        second = SecondHalf(settings, tenant, middle, upto) if middle is not None else None
        try:
            first_upto = middle if middle is not None else upto
            started = time.perf_counter()
            shown = ReplayProgress(log, tenant, upto, counted, progress) if progress else None
            if shown is not None and middle is not None:
                shown.halves(middle, second)
            folding = (lambda state: shown.first_at(state.position)) if shown else None
            replayed = rebuild(log, snapshots, tenant, Rebuild(first_upto, from_zero=True), folding)
            with collection_held():
                replayed_hash = content_hash(replayed)
            if second is not None:
                logger.info(
                    "the first half of the replay, to %s: folded here in %.2f s",
                    middle,
                    time.perf_counter() - started,
                )
            meanwhile = shown.report if shown is not None else None
            served_hash = elsewhere.result(meanwhile) if elsewhere is not None else None
            if second is not None:
                halves = second.result(meanwhile)
                joined = halves is not None and halves.start == replayed_hash
                if joined and halves is not None and halves.end == served_hash:
                    position = Position.parse(halves.position)
                    return Verification(position, served_hash, served_hash, None)
                if halves is not None and not joined:
                    logger.warning(
                        "the snapshot kept at %s is not the log of %s folded to it",
                        middle,
                        tenant,
                    )
                if shown is not None:
                    shown.halves(middle, None)  # the fold from zero goes on alone
                fold_log(replayed, log, tenant, upto, progress=folding)
                with collection_held():
                    replayed_hash = content_hash(replayed)
        finally:
            for child in (elsewhere, second):
                if child is not None:
                    child.close()
        difference = None
        if served_hash != replayed_hash:  # none came back, or a mismatch to show
            served = rebuild(log, snapshots, tenant, Rebuild(upto))
            with collection_held():
                served_hash = content_hash(served)
            if served_hash != replayed_hash:
                difference = first_difference(replayed, served)
        return Verification(replayed.position, replayed_hash, served_hash, difference)

    def diff(
        self, principal: Principal, first: Position, second: Position, limit: int | None
    ) -> Difference:
        """`limit`: of each kind of change, the biggest this many (None: all)."""
        tenant, log, snapshots = principal.tenant, self.runtime.log, self.runtime.snapshots
        state = rebuild(log, snapshots, tenant, Rebuild(first))
        old, before = links_of(state), state.position
        if folds_on(state, snapshots, tenant, second, frozenset()):
            fold_log(state, log, tenant, second)
        else:
            state = rebuild(log, snapshots, tenant, Rebuild(second))
        return Difference(before, state.position, link_difference(old, links_of(state), limit))

    def dead_letters(self, principal: Principal, limit: int | None = None) -> DeadLetters:
        """The oldest `limit` (None: all), each with the entry as the log holds it."""
        require(principal, ADMIN)
        tenant = principal.tenant
        letters = self.runtime.log.dead_letters(tenant, limit)
        raw = dict(self.runtime.log.entries_at(tenant, [r.position for r in letters]))
        return DeadLetters(
            [DeadLetter(r.position, r.reason, raw.get(r.position)) for r in letters],
            self.runtime.log.dead_letter_count(tenant),
        )

    def resend(self, principal: Principal) -> list[Resent]:
        """Append again every dead letter this code now reads and accepts (each once: its
        idempotency key names its old position); report the others with their reason."""
        require(principal, ADMIN)
        resent: list[Resent] = []
        readable: list[tuple[int, Event]] = []  # (where its answer goes, the event again)
        for letter in self.dead_letters(principal).letters:
            try:
                event = _readable(letter)
            except InvalidEvent as exc:
                resent.append(Resent(letter.position, None, str(exc)))
                continue
            key = f"dead-letter:{letter.position}"
            again = dataclasses.replace(event, position=None, key=key, fingerprint=key)
            readable.append((len(resent), again))
            resent.append(Resent(letter.position, None, None))
        for start in range(0, len(readable), DEFAULT_BATCH):  # a batch a round trip
            chunk = readable[start : start + DEFAULT_BATCH]
            appended = self.runtime.log.append(principal.tenant, [e for _, e in chunk])
            for (at, _), done in zip(chunk, appended, strict=True):
                resent[at] = dataclasses.replace(resent[at], appended=done.position)
        return resent


def _middle(counts: dict[Position, int], upto: Position) -> Position | None:
    """Of the snapshots kept up to `upto` and the events folded into each
    (`counted_snapshots`), the one nearest the middle of the log in events (not time: a log
    idle for hours after a million writes is not half-way at half its time): where the
    second half of a replay may start. None if none is kept before `upto`."""
    inside = {p: n for p, n in counts.items() if p != upto}
    half = max(inside.values(), default=0) / 2
    return min(inside, key=lambda p: abs(inside[p] - half), default=None)


def _decoded(entries: list[Entry], decoded: dict[Position, Event]) -> list[Event]:
    """The events of `entries` that decode, in order, taking those in `decoded` as they are."""
    fresh = decode_entries([e for e in entries if e[0] not in decoded])[0]
    if len(fresh) == len(entries):
        return fresh
    by_position = {event.position: event for event in fresh}
    found = (decoded.get(position) or by_position.get(position) for position, _ in entries)
    return [event for event in found if event is not None]


def _unreported(share: float) -> None:
    return None


def _reporting(events: Iterator[Event], at: Callable[[Position], None]) -> Iterator[Event]:
    for n, event in enumerate(events):
        if n % REPORT_EVERY == 0 and event.position is not None:
            at(event.position)
        yield event


def _readable(letter: DeadLetter) -> Event:
    if letter.raw is None:
        raise InvalidEvent(f"the entry at {letter.position} is no longer in the log")
    event = decode_entry(letter.raw, letter.position)
    event_type(event.type).check(event.data)
    return event


def first_difference(one: State, other: State) -> str:
    """The first thing two states disagree on, in words."""
    if len(one.memories) != len(other.memories):
        return f"memories: {len(one.memories)} against {len(other.memories)}"
    if one.concepts != other.concepts:
        return "the concept vocabularies differ"
    links = link_difference(links_of(one), links_of(other), None)
    changes = [*links.appeared, *links.vanished, *links.changed]
    if changes:
        c = min(changes, key=lambda c: (c.source_key, c.target_key))
        return f"link {c.source_key} -- {c.target_key}: {c.before} against {c.after}"
    for memory in one.rows:
        twin = other.memories.get(memory.id)
        if twin is None or (memory.valence, memory.accesses, memory.importance) != (
            twin.valence,
            twin.accesses,
            twin.importance,
        ):
            return f"memory {memory.id}"
    return "the labels or surfaces differ"
