"""The application: every command and query the surfaces offer (the HTTP app, the CLI
through the client, jobs, an MCP server), over the two stores.

Commands take plain values (workers/app/requests.py) and the caller's principal, make
payloads through each event type's record, and append them; queries answer from the
tenant's live state, created on first use, so one process serves any number of tenants.
Failures are domain errors (engine.errors, workers.errors); only the HTTP app turns them
into status codes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from assocmem.engine.errors import quoted
from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.document_ingested import DOCUMENT_INGESTED
from assocmem.engine.events.envelope import Event, encode_event
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.importance_set import IMPORTANCE_SET
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.payload import check_text, check_time
from assocmem.engine.events.subject_forgotten import SUBJECT_FORGOTTEN
from assocmem.engine.history.activity import ActivityFilter, activities, summarise
from assocmem.engine.history.audit import LinkHistory, MemoryEvent, with_taught_links
from assocmem.engine.history.link_diff import Links, link_difference
from assocmem.engine.history.link_diff import links_of as link_table
from assocmem.engine.history.link_index import LinkIndex, link_index
from assocmem.engine.position import MAX_PART, Position
from assocmem.engine.principal import ADMIN, FEEDBACK, READ, WRITE, Principal
from assocmem.engine.recall.chains import find_chains
from assocmem.engine.recall.filters import parse_filters
from assocmem.engine.recall.graph import check_graph_request, neighbourhood
from assocmem.engine.recall.links import links_of, links_version, pair_ppmi
from assocmem.engine.recall.prompt import MAX_BUDGET, MIN_BUDGET, prompt_text
from assocmem.engine.recall.question import parse_question
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.recall.time_window import listing_window, read_window
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.scoped_links import links_view
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility, visibility_of
from assocmem.engine.text.documents import unit_terms
from assocmem.engine.text.extraction import Extraction, given_terms
from assocmem.engine.text.timeexpr import parse_time
from assocmem.workers.app import results
from assocmem.workers.app.access import AccessRecorder
from assocmem.workers.app.extraction_pool import ExtractionPool
from assocmem.workers.app.history import (
    Difference,
    History,
    Verification,
    check_link_names,
    unknown_concepts,
)
from assocmem.workers.app.job_commands import JobCommands
from assocmem.workers.app.key_commands import KeyCommands
from assocmem.workers.app.memory_queries import MemoryQueries
from assocmem.workers.app.permissions import require
from assocmem.workers.app.request_values import (
    checked,
    checked_payload,
    extractions_of,
    fingerprint,
    parse_point,
    parse_position,
    written,
    zone_of,
)
from assocmem.workers.app.requests import (
    ActivityEntry,
    ActivityQuery,
    BatchItem,
    ChainRequest,
    Document,
    ImportanceChange,
    Note,
    Rating,
    ReadRequest,
)
from assocmem.workers.app.transfer import (
    ExportFilter,
    Imported,
    already_there,
    exported,
    parsed,
)
from assocmem.workers.errors import InvalidRequest, NotAllowed, UnknownMemory
from assocmem.workers.jobs.erasure import KINDS as ERASABLE
from assocmem.workers.jobs.erasure import Subject, subject_of
from assocmem.workers.jobs.erasure_job import enqueue_erasure
from assocmem.workers.jobs.job_list import JobInfo, job_info
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.state.heap import collection_held
from assocmem.workers.state.live import LiveState
from assocmem.workers.state.preload import StatePreload
from assocmem.workers.state.rebuild import Rebuild, rebuild
from assocmem.workers.state.rebuild_cache import RebuildCache
from assocmem.workers.store.ports import Appended
from assocmem.workers.store.redis.rate_limits import RateLimits

MAX_BATCH = 1000
"""Memories in one batch write."""
UNITS_PER_EVENT = 2000
"""A long document is appended as several document.ingested events of this many units."""
MB = 1024 * 1024
BUDGET_EVERY = 1.0
"""Seconds between two weighings of the tenant states held against their budget."""
PPMI_SAMPLES = 6
"""Kept snapshots a link's PPMI is read at, besides the served state (each one loaded)."""
PPMI_KEPT = 4096
"""PPMI values at kept snapshots remembered (each a state load the next view saves)."""


class Application(MemoryQueries):
    def __init__(
        self,
        runtime: Runtime,
        clock: Callable[[], float] = time.time,
        preload: StatePreload | None = None,
    ) -> None:
        self.runtime = runtime
        self.clock = clock
        """Event times and "now" of reads, unix seconds."""
        self.zone = zone_of(runtime.settings.timezone)
        self.accesses = AccessRecorder(self.append)
        self.rebuilds = RebuildCache(runtime.log, runtime.snapshots)
        self.history = History(runtime, self._served_index)
        """How links got their weight, memory histories, replays, diffs, dead letters."""
        self.appended: Counter[str] = Counter()
        """Events this process appended, by type (duplicates not counted): for metrics."""
        self.limits = RateLimits(runtime.settings, runtime.rates)
        """Requests and events per second of each API key."""
        self.keys = KeyCommands(runtime, clock)
        """API keys: created, listed, revoked, and checked on every request."""
        self.jobs = JobCommands(runtime, clock)
        """The pipeline's jobs, and the long work queued as jobs (consolidation, replay, audit)."""
        self.extraction = ExtractionPool(runtime.settings.extraction_helpers)
        """Concepts of large batches, extracted across processes (`close` ends them)."""
        self._preload = preload
        """Its tenant's state, loading since before this was made (workers/state/preload.py)."""
        self._live: OrderedDict[str, LiveState] = OrderedDict()
        """Per tenant, least recently used first."""
        self._live_lock = threading.Lock()
        self._live_budget = runtime.settings.tenant_state_mb * MB
        self._budget_due = 0.0
        self._ppmi_kept: OrderedDict[tuple[object, ...], float] = OrderedDict()
        """A link's PPMI at a kept snapshot, by tenant, epoch, position and concepts."""
        self.evicted = 0
        """Tenant states let go for the budget, since the start (the metrics say it)."""
        self._stop: threading.Event | None = None
        self.recording: threading.Thread | None = None
        """The thread that logs reads' accesses: joined while the connections are open."""
        self.folds: list[threading.Thread] = []
        """The live states' refresh threads, each blocked up to TAIL_WAIT on the stream: closing
        the connections under them ends them at once."""

    # --- running -----------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Keep every live state folded as entries arrive and log accesses, until `stop`."""
        self._stop = stop
        self.recording = self._thread(self.accesses.run, stop)
        for live in list(self._live.values()):
            self.folds.append(self._thread(live.keep_fresh, stop))

    def live(self, tenant: str) -> LiveState:
        """The tenant's live state, created (and kept fresh, once started) on first use."""
        live = self._live.get(tenant)
        if live is not None:
            if self._live_budget:
                with self._live_lock:  # the least recently used are let go first
                    if tenant in self._live:
                        self._live.move_to_end(tenant)
                    # states grow as they load and fold: weighed again now and then
                    if time.monotonic() >= self._budget_due:
                        self._within_budget(keep=tenant)
            return live
        with self._live_lock:
            live = self._live.get(tenant)
            if live is None:
                preload = self._preload
                live = self._live[tenant] = LiveState(
                    self.runtime.log,
                    self.runtime.snapshots,
                    tenant,
                    preload.take if preload and preload.tenant == tenant else None,
                )
                if self._stop is not None:
                    self.folds.append(self._thread(live.keep_fresh, self._stop))
                self._within_budget(keep=tenant)
            return live

    def live_tenants(self) -> int:
        return len(self._live)

    def _within_budget(self, keep: str) -> None:
        """Let the least recently used tenants' states go while the states held estimate
        over ASSOCMEM_TENANT_STATE_MB; never the default tenant's, nor `keep`. (Under
        `_live_lock`.) A tenant let go is loaded again at its next read, from its latest
        snapshot and the log after it."""
        if not self._live_budget:
            return
        self._budget_due = time.monotonic() + BUDGET_EVERY
        held = sum(live.approx_bytes() for live in self._live.values())
        for tenant in list(self._live):
            if held <= self._live_budget:
                return
            if tenant in (keep, self.runtime.settings.tenant):
                continue
            gone = self._live.pop(tenant)
            held -= gone.approx_bytes()
            gone.close()
            self.evicted += 1

    def is_ready(self, tenant: str) -> bool:
        """Whether the tenant's live state has been loaded and folded up to the log's end
        (reads of it need not wait)."""
        return self.live(tenant).caught_up

    @staticmethod
    def _thread(
        target: Callable[[threading.Event], None], stop: threading.Event
    ) -> threading.Thread:
        thread = threading.Thread(target=target, args=(stop,), daemon=True)
        thread.start()
        return thread

    # --- commands ----------------------------------------------------------------------------

    def write(self, principal: Principal, notes: list[Note]) -> list[results.Written]:
        require(principal, WRITE)
        if not 1 <= len(notes) <= MAX_BATCH:
            raise InvalidRequest(f"items has {len(notes)} entries: expected 1 to {MAX_BATCH}")
        superseded = [i for note in notes for i in note.supersedes or []]
        if superseded:
            self._check_known(principal.tenant, superseded, "supersedes")
        wheres = ["" if len(notes) == 1 else f"items[{n}]." for n in range(len(notes))]
        extractions = extractions_of(
            [(note.text, note.concepts, where) for note, where in zip(notes, wheres, strict=True)],
            self.extraction.extract_many,
        )
        events = [
            self._note_event(principal, note, where, extraction)
            for note, where, extraction in zip(notes, wheres, extractions, strict=True)
        ]
        return [written(a, e) for a, e in zip(self._append(principal, events), events, strict=True)]

    def log_activity(self, principal: Principal, entry: ActivityEntry) -> results.Written:
        require(principal, WRITE)
        [extraction] = extractions_of([(entry.text, None, "")], self.extraction.extract_many)
        event = self._activity_event(principal, entry, "", extraction)
        return written(self._append(principal, [event])[0], event)

    def publish(self, principal: Principal, items: list[BatchItem]) -> list[object]:
        """Append up to MAX_BATCH events of any kind (notes, activities, ratings, importance
        changes) atomically, in order; per item, what its own command returns. An item the
        key may not append, or that is invalid, refuses the batch, naming the item."""
        if not 1 <= len(items) <= MAX_BATCH:
            raise InvalidRequest(f"items has {len(items)} entries: expected 1 to {MAX_BATCH}")
        events: list[Event] = []
        terms: dict[int, tuple[str, ...]] = {}
        extractions = self._extractions_of_notes(items)
        for n, item in enumerate(items):
            where = f"items[{n}]."
            if isinstance(item, Note):
                require(principal, WRITE)
                if item.supersedes:
                    self._check_known(principal.tenant, item.supersedes, f"{where}supersedes")
                events.append(self._note_event(principal, item, where, extractions[n]))
            elif isinstance(item, ActivityEntry):
                require(principal, WRITE)
                events.append(self._activity_event(principal, item, where, extractions[n]))
            elif isinstance(item, Rating):
                require(principal, FEEDBACK)
                event, terms[n] = self._rating_event(principal, item, where)
                events.append(event)
            else:
                require(principal, WRITE)
                events.append(self._importance_event(principal, item, where))
        appended = self._append(principal, events)
        found: list[object] = []
        for n, (a, event) in enumerate(zip(appended, events, strict=True)):
            if n in terms:
                found.append(results.Rated(a.position, terms[n], terms[n], a.is_duplicate))
            elif event.type in (MEMORY_WRITTEN.name, ACTIVITY_LOGGED.name):
                found.append(written(a, event))
            else:
                found.append(a)
        return found

    def ingest(self, principal: Principal, document: Document) -> results.Ingested:
        require(principal, WRITE)
        checked(lambda: check_text(document.text))
        units, labels = checked(lambda: unit_terms(document.text, document.scope))
        if not units:
            raise InvalidRequest(
                "text has no unit with two or more concepts: expected sentences with content words"
            )
        events = []
        for n in range(0, len(units), UNITS_PER_EVENT):
            data = checked_payload(
                "",
                lambda n=n: DOCUMENT_INGESTED.payload(
                    title=document.title,
                    source=document.source,
                    scope=document.scope,
                    units=units[n : n + UNITS_PER_EVENT],
                    labels=labels,
                ),
            )
            key = f"{document.key}:{n}" if document.key else None
            events.append(self._event(principal, DOCUMENT_INGESTED.name, data, None, key, ""))
        appended = self._append(principal, events)
        return results.Ingested(
            [a.position for a in appended],
            len(units),
            sum(len(u) for u in units),
            all(a.is_duplicate for a in appended),
        )

    def give_feedback(self, principal: Principal, rating: Rating) -> results.Rated:
        require(principal, FEEDBACK)
        event, terms = self._rating_event(principal, rating, "")
        with self.live(principal.tenant).served() as state:
            labels = tuple(state.label(c) for c in terms)
        appended = self._append(principal, [event])[0]
        return results.Rated(appended.position, terms, labels, appended.is_duplicate)

    def set_importance(
        self, principal: Principal, memory_id: str, importance: int, key: str | None = None
    ) -> Position:
        require(principal, WRITE)
        event = self._importance_event(principal, ImportanceChange(memory_id, importance, key), "")
        return self._append(principal, [event])[0].position

    def append(self, principal: Principal, event_type: str, payloads: list[dict[str, Any]]) -> None:
        """Append checked payloads of one type as they are (memory.accessed from reads)."""
        events = [self._event(principal, event_type, data, None, None, "") for data in payloads]
        self._append(principal, events, limited=False)

    def forget(self, principal: Principal, kind: str, value: str) -> JobInfo:
        """Queue the erasure of every event of a user, an agent, a session or a namespace of
        the caller's tenant (or of the whole tenant: `value` its name), after recording the
        request as a subject.forgotten event naming the subject by its SHA-256 only."""
        require(principal, ADMIN)
        if kind not in ERASABLE:
            raise InvalidRequest(f"kind {kind!r} is invalid: expected one of {', '.join(ERASABLE)}")
        if kind == "tenant" and value != principal.tenant:
            raise NotAllowed(
                f"tenant {value!r} is not yours: a key erases its own tenant ({principal.tenant!r})"
            )
        subject = subject_of(kind, value)
        job_id = self._erasure_id(principal)
        if kind != "tenant":
            data = checked_payload(
                "", lambda: SUBJECT_FORGOTTEN.payload(kind=kind, digest=subject.digest)
            )
            event = self._event(principal, SUBJECT_FORGOTTEN.name, data, None, job_id, "")
            self._append(principal, [event], limited=False)
        return self._erase(principal, subject, job_id)

    def _erasure_id(self, principal: Principal) -> str:
        return f"erase-{principal.tenant}-{int(self.clock() * 1000)}"

    def _erase(self, principal: Principal, subject: Subject, job_id: str) -> JobInfo:
        enqueue_erasure(self.runtime, principal.tenant, subject, job_id)
        return job_info(self.runtime, job_id)

    def export(self, principal: Principal, where: ExportFilter) -> Iterator[bytes]:
        """The tenant's events that `where` passes, as JSON lines (an admin's)."""
        require(principal, ADMIN)
        return exported(self.runtime.log, principal.tenant, where)

    def import_events(self, principal: Principal, lines: list[object]) -> Imported:
        """Append exported lines (workers/app/transfer.py): at their own positions where
        they all come after the log's end, else anew; never twice (an admin's)."""
        require(principal, ADMIN)
        tenant, log = principal.tenant, self.runtime.log
        events = parsed(lines, tenant)
        last = log.last_position(tenant)
        if last is None or last < events[0][0]:
            live = self.live(tenant)
            with live.appending():
                kept = log.append_at(tenant, [(p, encode_event(e)) for p, e in events])
            if kept:
                live.refresh()
                return Imported(len(events), len(events), 0, True, str(events[-1][0]))
        there = already_there(log, tenant, events)
        fresh = [
            dataclasses.replace(event, key=f"import-{position}", position=None)
            for (position, event), held in zip(events, there, strict=True)
            if not held
        ]
        appended = self._append(principal, fresh, limited=False) if fresh else []
        new = [a for a in appended if not a.is_duplicate]
        last_new = str(max(a.position for a in new)) if new else None
        return Imported(len(events), len(new), len(events) - len(new), False, last_new)

    def job(self, principal: Principal, job_id: str) -> JobInfo:
        """A job of the caller's tenant. Before it is said to have finished, the state this
        process serves follows any rewrite of the log (an erasure's), so that the caller's
        next read no longer returns what was erased: the background fold notices a rewrite
        only between its blocking reads of the log, up to a second later (as other replicas
        still do)."""
        found = self.jobs.one(principal, job_id)
        if found.state == "finished":
            live = self._live.get(principal.tenant)
            if live is not None:
                live.reload_if_rewritten()
        return found

    # --- queries -----------------------------------------------------------------------------

    def read(self, principal: Principal, request: ReadRequest) -> results.Read:
        require(principal, READ)
        zone = zone_of(request.tz) if request.tz else self.zone
        now = datetime.fromtimestamp(self.clock() if request.now is None else request.now, zone)
        window = checked(
            lambda: read_window(
                request.text, request.time, request.start, request.end, request.auto_time, now
            )
        )
        question = window.question
        concepts = (
            tuple(given_terms(request.concepts))
            if request.concepts
            else question.concepts
            if question is not None
            else ()
        )
        if not concepts and window.range is None:
            raise InvalidRequest(
                "concepts and text are both empty: expected concepts or text to extract them from"
                if question is None
                else f"text {quoted(request.text)} has no content words: expected words that name a topic"
            )
        if (
            request.token_budget is not None
            and not MIN_BUDGET <= request.token_budget <= MAX_BUDGET
        ):
            raise InvalidRequest(
                f"token_budget {request.token_budget} is out of range: expected {MIN_BUDGET} to {MAX_BUDGET}"
            )
        query = checked(
            lambda: Query(
                concepts,
                depth=request.depth,
                floor=request.floor,
                limit=request.limit,
                now=now.timestamp(),
                time_range=window.range,
                history=request.history,
                context=request.context,
                kinds=tuple(request.kinds) if request.kinds else ("memory", "activity"),
                time_concepts=question.time_concepts if question is not None else (),
                time_hint=question.hint if question is not None else None,
                prefers_recent=question is not None and question.prefers_recent,
                visibility=self._visibility(principal),
                filters=parse_filters(request.filters),
                expired_before=self.clock(),
            )
        )
        budget = request.token_budget
        live = request.as_of is None and not request.without_feedback
        with self._state(
            principal.tenant, request.after, request.as_of, request.without_feedback
        ) as state:
            found = recall(links_view(state, query.visibility), query)
            prompt = prompt_text(found, budget) if budget else None
        if live and request.record_access and found.items:
            self.accesses.record(principal, [item.memory.id for item in found.items])
        return results.Read(found, window, prompt)

    def chain(self, principal: Principal, request: ChainRequest) -> results.Chains:
        require(principal, READ)
        concepts = self._question_terms(request.concepts, request.text)
        if request.floor < 0:
            raise InvalidRequest(f"floor {request.floor} is out of range: expected 0 or more")
        with self._state(principal.tenant, request.after) as whole:
            state = links_view(whole, self._visibility(principal))
            unknown = tuple(c for c in concepts if c not in state.concept_index)
            chains = checked(
                lambda: find_chains(state, links_of(state), tuple(concepts), request.floor)
            )
            labels = tuple(state.label(c) for c in concepts)
            return results.Chains(state.position, tuple(concepts), labels, unknown, chains)

    def graph(
        self, principal: Principal, concepts: list[str], hops: int, as_of: str | None = None
    ) -> results.Neighbourhood:
        require(principal, READ)
        check_graph_request(concepts, hops)  # as given: the API's schema counts them so
        seeds = list(given_terms(concepts))
        with self._state(principal.tenant, None, as_of) as whole:
            state = links_view(whole, self._visibility(principal))
            edges = checked(lambda: neighbourhood(state, seeds, hops))
            labels = tuple(state.label(c) for c in seeds)
            unknown = tuple(c for c in seeds if c not in state.concept_index)
            return results.Neighbourhood(state.position, tuple(seeds), labels, unknown, hops, edges)

    def activities(self, principal: Principal, request: ActivityQuery) -> results.Activities:
        require(principal, READ)
        window, spec = self._listing(principal, request)
        with self._state(principal.tenant) as state:
            entries = activities(state, spec)
            labels = {c: state.label(c) for m in entries for c in m.concepts}
            return results.Activities(state.position, window.start, window.end, entries, labels)

    def summary(self, principal: Principal, request: ActivityQuery) -> results.Summary:
        require(principal, READ)
        window, spec = self._listing(principal, request)
        zone = zone_of(request.tz) if request.tz else self.zone
        with self._state(principal.tenant) as state:
            periods = checked(lambda: summarise(state, spec, request.period, zone))
            labels = {
                c: state.label(c)
                for p in periods
                for c in (*p.top_concepts, *(c for m in p.highlights for c in m.concepts))
            }
            return results.Summary(
                state.position, request.period, window.start, window.end, periods, labels
            )

    def state(
        self, principal: Principal, as_of: str | None = None, without_feedback: bool = False
    ) -> results.StateSummary:
        require(principal, READ)
        with self._state(principal.tenant, None, as_of, without_feedback) as state:
            with collection_held():
                digest = content_hash(state)
            return results.StateSummary(
                state.position,
                digest,
                len(state.memories),
                len(state.concepts),
                state.documents,
                state.written_links(),
                state.taught_links(),
            )

    def health(self, principal: Principal) -> results.Health:
        self.runtime.log.ping()
        tenant = principal.tenant
        return results.Health(
            tenant, self.runtime.log.length(tenant), self.live(tenant).served_position
        )

    def audit_link(self, principal: Principal, source: str, target: str) -> LinkHistory:
        """Every event that changed the link between two concepts, with the weight after."""
        require(principal, READ)
        return self.history.link(principal, source, target)

    def link_ppmi(
        self, principal: Principal, source: str, target: str, samples: int = PPMI_SAMPLES
    ) -> list[results.PpmiAt]:
        """PPMI of a link's written counts over time: at up to `samples` snapshots kept
        along the log (evenly picked), and in the served state. PPMI moves with every
        event that writes either concept or any other (the marginals), so it is sampled
        where whole states are kept rather than at the link's own changes."""
        require(principal, READ)
        a, b = check_link_names(source, target)
        visibility = self._visibility(principal)
        tenant, log, snapshots = principal.tenant, self.runtime.log, self.runtime.snapshots
        kept = snapshots.starts(tenant)  # none before the workers first publish
        last = len(kept) - 1
        picked = (
            [kept[round(n * last / max(samples - 1, 1))] for n in range(samples)] if kept else []
        )
        found = []
        epoch = log.epoch(tenant)
        for position in dict.fromkeys(picked):
            # a kept snapshot never changes (an erasure raises the epoch): its value is
            # kept for the next view of the link, for a reader who sees every scope
            key = (tenant, epoch, position, a, b)
            value = self._ppmi_kept.get(key) if visibility.everything else None
            if value is None:
                state = rebuild(log, snapshots, tenant, Rebuild(position))
                value = pair_ppmi(links_view(state, visibility), a, b)
                if visibility.everything:
                    self._ppmi_kept[key] = value
                    while len(self._ppmi_kept) > PPMI_KEPT:
                        self._ppmi_kept.popitem(last=False)
            found.append(results.PpmiAt(position, value))
        with self._state(tenant) as state:
            if not found or found[-1].position != state.position:
                value = pair_ppmi(links_view(state, visibility), a, b)
                found.append(results.PpmiAt(state.position, value))
        return found

    def start_audit_link(self, principal: Principal, source: str, target: str) -> JobInfo:
        """Queue the audit of a link, for long logs; a concept no event ever named is an
        UnknownConcept at once, not a job that fails."""
        require(principal, READ)
        given = check_link_names(source, target)
        index = self._served_index(principal.tenant, *given)
        if index.unknown:
            if index.position == self.runtime.log.last_position(principal.tenant):
                raise unknown_concepts(given, index)  # the whole log: no event names it
            self.audit_link(principal, source, target)  # raises, unless events since name it
        return self.jobs.audit_link(principal, source, target)

    def _served_index(self, tenant: str, source: str, target: str) -> LinkIndex:
        """A link's index in the served state (a link audit reads the log after it only)."""
        with self.live(tenant).served() as state:
            return link_index(state, source, target)

    def audit_memory(self, principal: Principal, memory_id: str) -> list[MemoryEvent]:
        """A memory's history, for a reader who may see the memory (else it is unknown);
        each rating says which link from a stream neighbour it taught."""
        require(principal, READ)
        found = self.history.memory(principal, memory_id)
        with self._state(principal.tenant) as state:
            memory = state.memories.get(memory_id)
            if memory is not None and not self._visibility(principal).sees(memory):
                raise UnknownMemory(
                    f"id {memory_id!r} is unknown: expected the id of a written memory"
                )
            return with_taught_links(state, memory_id, found)

    def verify(self, principal: Principal, until: str | None) -> Verification:
        require(principal, READ)
        upto = parse_point(until, "until") if until is not None else None
        return self.history.verify(principal, upto)

    def diff(
        self, principal: Principal, first: str, second: str, limit: int | None = None
    ) -> Difference:
        """`first` and `second`: a position, an ISO time, or a time expression ('yesterday',
        '上周'), which stands for the end of the time it names (now at the latest); `limit`:
        of each kind of change, the biggest this many (None: all)."""
        require(principal, READ)
        earlier, later = self._moment(first, "first"), self._moment(second, "second")
        with self.live(principal.tenant).served() as now:
            # the usual second moment is now: the served state, not a second rebuild
            served = (now.position, _link_table(now)) if later >= now.position else None
        if served is None or earlier > later:
            return self.history.diff(principal, earlier, later, limit)
        with self.rebuilds.state(principal.tenant, earlier, frozenset()) as then:
            before = (then.position, _link_table(then))  # kept: the page asks again
        return Difference(before[0], served[0], link_difference(before[1], served[1], limit))

    def _moment(self, text: str, field: str) -> Position:
        try:
            return parse_point(text, field)
        except InvalidRequest as refused:
            now = datetime.fromtimestamp(self.clock(), self.zone)
            match = parse_time(text, now)
            if match is None:
                raise InvalidRequest(f"{refused}, or a time expression ('yesterday')") from None
            end = min(match.end, now).timestamp()
            return Position(max(0, int(end * 1000)), MAX_PART)

    # --- helpers -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _state(
        self,
        tenant: str,
        after: str | None = None,
        as_of: str | None = None,
        without_feedback: bool = False,
    ) -> Iterator[State]:
        """The served state (at least at `after`), or a rebuilt one for `as_of` or without feedback."""
        if as_of is not None or without_feedback:
            upto = parse_point(as_of, "as_of") if as_of is not None else None
            skip = frozenset({FEEDBACK_GIVEN.name}) if without_feedback else frozenset()
            with self.rebuilds.state(tenant, upto, skip) as state:
                yield state
            return
        wanted = parse_position(after, "after") if after is not None else None
        with self.live(tenant).served(wanted) as state:
            yield state

    def _listing(self, principal: Principal, request: ActivityQuery) -> tuple[Any, ActivityFilter]:
        zone = zone_of(request.tz) if request.tz else self.zone
        now = datetime.fromtimestamp(self.clock(), zone)
        window = checked(
            lambda: listing_window(request.date, request.start, request.end, request.when, now)
        )
        spec = checked(
            lambda: ActivityFilter(
                window.start,
                window.end,
                request.category,
                request.keyword,
                request.source,
                request.limit,
                self._visibility(principal),
            )
        )
        return window, spec

    @staticmethod
    def _visibility(principal: Principal) -> Visibility:
        return visibility_of(
            principal.user, principal.session, principal.namespace, principal.may(ADMIN)
        )

    def _question_terms(self, concepts: list[str] | None, text: str | None) -> tuple[str, ...]:
        """Named concepts, or the content concepts of a question's text (question words out)."""
        if concepts:
            return tuple(given_terms(concepts))
        if text and text.strip():
            found = parse_question(text, datetime.fromtimestamp(self.clock(), self.zone)).concepts
            if found:
                return found
            raise InvalidRequest(
                f"text {quoted(text)} has no content words: expected words that name a topic"
            )
        raise InvalidRequest(
            "concepts and text are both empty: expected concepts or text to extract them from"
        )

    def _event(
        self,
        principal: Principal,
        event_type: str,
        data: dict[str, Any],
        ts: float | None,
        key: str | None,
        where: str,
    ) -> Event:
        if ts is not None:
            checked(lambda: check_time(ts, f"{where}ts"))
        moment = self.clock() if ts is None else ts
        said = fingerprint(event_type, data, ts) if key else None
        return Event(
            event_type,
            principal.tenant,
            principal.agent,
            moment,
            data,
            principal.user,
            key,
            fingerprint=said,
            session=principal.session,
            namespace=principal.namespace,
        )

    def _extractions_of_notes(self, items: list[BatchItem]) -> dict[int, Extraction]:
        """The concepts of every note and activity of a batch, by item, extracted together."""
        notes = {
            n: (item.text, item.concepts if isinstance(item, Note) else None, f"items[{n}].")
            for n, item in enumerate(items)
            if isinstance(item, Note | ActivityEntry)
        }
        found = extractions_of(list(notes.values()), self.extraction.extract_many)
        return dict(zip(notes, found, strict=True))

    def _note_event(
        self, principal: Principal, note: Note, where: str, extraction: Extraction
    ) -> Event:
        if not extraction.concepts:  # it could never be found
            raise InvalidRequest(
                f"{where}text {quoted(note.text)} has no content words: expected words that name"
                " a topic, or concepts"
            )
        data = checked_payload(
            where,
            lambda: MEMORY_WRITTEN.payload(
                text=note.text,
                extraction=extraction,
                importance=note.importance,
                supersedes=note.supersedes,
                metadata=note.metadata,
                expires_at=note.expires_at,
            ),
        )
        if note.expires_at is not None and note.expires_at <= self.clock():
            raise InvalidRequest(
                f"{where}expires_at {note.expires_at} is not in the future: expected a time after"
                " now (unix seconds)"
            )
        return self._event(principal, MEMORY_WRITTEN.name, data, note.ts, note.key, where)

    def _activity_event(
        self,
        principal: Principal,
        entry: ActivityEntry,
        where: str,
        extraction: Extraction,
    ) -> Event:
        data = checked_payload(
            where,
            lambda: ACTIVITY_LOGGED.payload(
                text=entry.text,
                extraction=extraction,
                importance=entry.importance,
                category=entry.category,
                tags=entry.tags,
                source=entry.source,
            ),
        )
        return self._event(principal, ACTIVITY_LOGGED.name, data, entry.ts, entry.key, where)

    def _rating_event(
        self, principal: Principal, rating: Rating, where: str
    ) -> tuple[Event, tuple[str, ...]]:
        terms = tuple(self._question_terms(rating.concepts, rating.text))
        data = checked_payload(
            where,
            lambda: FEEDBACK_GIVEN.payload(
                memory_ids=rating.ids, outcome=rating.outcome, concepts=list(terms)
            ),
        )
        self._check_known(principal.tenant, rating.ids, f"{where}ids")
        return self._event(principal, FEEDBACK_GIVEN.name, data, None, rating.key, where), terms

    def _importance_event(
        self, principal: Principal, change: ImportanceChange, where: str
    ) -> Event:
        data = checked_payload(
            where,
            lambda: IMPORTANCE_SET.payload(
                memory_id=change.memory_id, importance=change.importance
            ),
        )
        self._check_known(principal.tenant, [change.memory_id], f"{where}id")
        return self._event(principal, IMPORTANCE_SET.name, data, None, change.key, where)

    def _append(
        self, principal: Principal, events: list[Event], limited: bool = True
    ) -> list[Appended]:
        """`limited`: counted against the key's event rate (the access records of reads
        are not: the reads were counted)."""
        if limited:
            self.limits.take_events(principal, len(events))
        live = self.live(principal.tenant)
        with live.appending():
            appended = self.runtime.log.append(principal.tenant, events)
            if appended:
                live.note_appended(max(a.position for a in appended))
                live.fold_appended(events, appended)
        self.appended.update(
            e.type for e, a in zip(events, appended, strict=True) if not a.is_duplicate
        )
        return appended

    def _check_known(self, tenant: str, ids: list[str], field: str) -> None:
        live = self.live(tenant)
        with live.served() as state:
            unknown = [i for i in ids if i not in state.memories]
        if unknown:  # written through another replica (or before a restart), not folded here yet
            live.refresh()
            with live.served() as state:
                unknown = [i for i in unknown if i not in state.memories]
        if unknown:
            raise UnknownMemory(f"{field} {unknown} are unknown: expected ids of written memories")


def _link_table(state: State) -> Links:
    """Every link of `state` as a diff compares them, made once per version of the state."""
    version = links_version(state)
    found = state.derived.get("link_table")
    if not (isinstance(found, tuple) and found[0] == version):
        found = state.derived["link_table"] = (version, link_table(state))
    return found[1]  # type: ignore[no-any-return]
