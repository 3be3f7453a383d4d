"""The HTTP app: built by `create_app` with an explicit route list and one lifespan.

Endpoints turn request bodies into the application's plain values, call it with the
caller's principal, and turn its results into JSON (responses.py) and its domain errors
into RFC 9457 problem responses. No rule lives here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

import orjson
from fastapi import FastAPI, Path, Query, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from assocmem.api.http import (
    history_routes,
    key_routes,
    memory_routes,
    probe_routes,
    problems,
    responses,
    transfer_routes,
    ui_routes,
)
from assocmem.api.http import query_params as q
from assocmem.api.http import response_schemas as out
from assocmem.api.http.fields import CONCEPT_SCHEMA
from assocmem.api.http.guard import Guard
from assocmem.api.http.in_flight import InFlight
from assocmem.api.http.json_body import CheckedJsonRoute
from assocmem.api.http.metrics import Metrics
from assocmem.api.http.principal import Caller
from assocmem.api.http.refusals import CountRefusals
from assocmem.api.http.request_ids import RequestIds
from assocmem.api.http.schemas import (
    ActivityIn,
    ActivityItem,
    ChainIn,
    ConsolidateIn,
    DocumentIn,
    EventBatchIn,
    FeedbackIn,
    FeedbackItem,
    ForgetIn,
    ImportanceIn,
    ImportanceItem,
    MemoryBatchIn,
    MemoryIn,
    MemoryItem,
    ReadIn,
)
from assocmem.engine.recall import dominance
from assocmem.engine.text.extraction import warm_up
from assocmem.workers.app.application import Application
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
from assocmem.workers.runtime.native_threads import limit_native_threads
from assocmem.workers.runtime.redis_server import wait_while_loading
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.live import LiveState
from assocmem.workers.state.preload import StatePreload

WARM_AFTER = 0.5
"""Seconds after the default tenant's state is served that the API loads the extraction
tables and networkx (`_warm`)."""

log = logging.getLogger(__name__)


class OrjsonResponse(JSONResponse):
    """JSON via orjson: the responses carry many floats and lists, where it is several times faster."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def _warm(live: LiveState, stop: threading.Event) -> None:
    """The default tenant's state loaded first (a first read waits for it), then the
    extraction tables (only text waits for those): loading both at once, each slowed the other.
    Then networkx, which only deep reads and chains use (engine/recall/chains.py), so that the first
    of them does not wait for it. The tables and networkx wait WARM_AFTER: their loads hold
    the interpreter for half a second, and the readiness probe and first reads answered
    meanwhile waited for it (text that comes sooner loads the tables itself)."""
    with contextlib.suppress(Exception):  # Redis not there yet: the read will say so
        with live.served():
            pass
    if stop.wait(WARM_AFTER):
        return
    warm_up()
    import networkx  # noqa: F401


def create_app(
    settings: Settings, runtime: Runtime | None = None, preload: StatePreload | None = None
) -> FastAPI:
    """The app over `runtime` (by default connected to the settings' Redis at start-up);
    `preload`: the default tenant's state, loading since before the app was imported."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        limit_native_threads()
        if not dominance.NATIVE:
            log.warning(dominance.NOT_NATIVE)
        if runtime is None and settings.redis_url:
            wait_while_loading(settings.redis_url)  # `up` starts us while Redis loads
        connected = runtime or Runtime.connect(settings)
        application = app.state.application = Application(connected, preload=preload)
        app.state.settings = settings
        app.state.metrics = Metrics(application)
        stop = threading.Event()
        application.start(stop)
        live = application.live(settings.tenant)  # the default tenant is folded from the start
        warming = threading.Thread(target=_warm, args=(live, stop), daemon=True)
        warming.start()
        yield
        stop.set()
        for thread in [application.recording, warming]:
            if thread is not None:
                thread.join(timeout=10)  # the last accesses are logged
        application.extraction.close()
        if runtime is None:
            connected.close()  # wakes the refresh threads out of their read of the stream
        for thread in application.folds:
            thread.join(timeout=10)

    app = FastAPI(
        title="assocmem",
        summary="Long-term associative memory for AI agents.",
        description="Every route but /healthz and /readyz takes an API key"
        " (`Authorization: Bearer <key>` or `X-API-Key`): its tenant and agent are the"
        " request's. Whom a request is about comes in optional headers, recorded on every"
        " event it appends and filtering what reads see: `X-Assocmem-User`,"
        " `X-Assocmem-Session`, `X-Assocmem-Namespace` (1 to 128 letters, digits or"
        " `.:@+-_`; a malformed one is a 422).",
        version="0.1.0",
        lifespan=lifespan,
        default_response_class=OrjsonResponse,
    )
    app.router.route_class = CheckedJsonRoute
    for path, endpoint, method, status, model in [
        *_ROUTES,
        *memory_routes.ROUTES,
        *history_routes.ROUTES,
        *key_routes.ROUTES,
        *probe_routes.ROUTES,
        *transfer_routes.ROUTES,
    ]:
        app.add_api_route(
            path,
            _responding(endpoint, status, settings.read_timeout),
            methods=[method],
            status_code=status,
            response_model=model,
        )
    for path, endpoint, media in transfer_routes.STREAMED:
        app.add_api_route(
            path,
            endpoint,
            methods=["GET"],
            response_class=StreamingResponse,
            responses={200: {"content": {media: {"schema": {"type": "string"}}}}},
        )
    app.add_api_route(
        "/metrics",
        metrics,
        methods=["GET"],
        response_class=Response,
        responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
    )
    ui_routes.install(app, app.version)
    problems.install(app)
    app.add_middleware(InFlight, limit=settings.max_connections)
    app.add_middleware(Guard, allowed_hosts=settings.hosts(), max_body=settings.max_body)
    app.add_middleware(CountRefusals)
    app.add_middleware(RequestIds)
    app.openapi = functools.partial(_openapi, app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        app.openapi_schema = problems.documented(
            get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes
            )
        )
    return app.openapi_schema


def _responding(
    endpoint: Callable[..., dict[str, Any]], status: int, budget: float
) -> Callable[..., Response]:
    """The endpoint, returning its dict as an orjson response.

    A returned dict would go through FastAPI's response validation and encoder: a
    pydantic pass over every item, path and weight of a read (an eighth of a read of ten
    short notes, more with long ones). The signature (and so the request parsing and
    the OpenAPI schema of the parameters) is the endpoint's own.
    """

    if endpoint in _ON_THE_LOOP:

        @functools.wraps(endpoint)
        async def respond_here(*args: Any, **kwargs: Any) -> Response:
            live = _application(kwargs["request"]).live(kwargs["caller"].tenant)
            if live.settled() and _is_light(kwargs["body"]):
                return OrjsonResponse(endpoint(*args, **kwargs), status_code=status)
            # Loading the state, folding a backlog or reading long text: not on the loop,
            # and not longer than the budget (the thread finishes; the connection is free).
            content = await _within(budget, endpoint, args, kwargs)
            return OrjsonResponse(content, status_code=status)

        return respond_here

    if endpoint is state:

        @functools.wraps(endpoint)
        async def respond_rebuilt(*args: Any, **kwargs: Any) -> Response:
            if kwargs["as_of"] is None and not kwargs["without_feedback"]:
                content = await run_in_threadpool(endpoint, *args, **kwargs)
            else:  # a rebuilt state, as a read of one
                content = await _within(budget, endpoint, args, kwargs)
            return OrjsonResponse(content, status_code=status)

        return respond_rebuilt

    @functools.wraps(endpoint)
    def respond(*args: Any, **kwargs: Any) -> Response:
        content = endpoint(*args, **kwargs)
        if isinstance(content, Response):  # a status of its own (a probe's 503)
            return content
        return OrjsonResponse(content, status_code=status)

    return respond


async def _within(
    budget: float, endpoint: Callable[..., dict[str, Any]], args: Any, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The endpoint's answer, in a thread, or ReadTimedOut past `budget` seconds (saying how
    far a rebuild has come): the thread goes on, and the connection is free."""
    try:
        return await asyncio.wait_for(run_in_threadpool(endpoint, *args, **kwargs), budget)
    except TimeoutError:
        rebuilds = _application(kwargs["request"]).rebuilds
        under_way = rebuilds.under_way(kwargs["caller"].tenant)
        doing = f"{under_way.describe()}; " if under_way is not None else ""
        raise problems.ReadTimedOut(
            f"{doing}the read took over {budget:g} s (ASSOCMEM_READ_TIMEOUT): try again"
            " (a state rebuilt for as_of or without_feedback is kept for it)"
        ) from None


def _application(request: Request) -> Application:
    return request.app.state.application  # type: ignore[no-any-return]


def _note(body: MemoryIn) -> Note:
    return Note(
        body.text,
        body.concepts,
        body.importance,
        body.ts,
        body.supersedes,
        body.key,
        body.metadata,
        body.expires_at,
    )


def write_memory(body: MemoryIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Append one memory. Concepts are extracted from the text unless given."""
    return responses.written_view(_application(request).write(caller, [_note(body)])[0])


def write_memories(body: MemoryBatchIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Append up to 1000 memories atomically, in order."""
    written = _application(request).write(caller, [_note(item) for item in body.items])
    return {"items": [responses.written_view(w) for w in written]}


def publish_events(body: EventBatchIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Append 1 to 1000 events of any kind (memory, activity, feedback, importance),
    atomically and in order; per item, the answer its own route gives (an item the key may
    not append, or an invalid one, refuses the whole batch, naming the item)."""
    published = _application(request).publish(caller, [_item(i) for i in body.items])
    return {"items": [responses.published_view(p) for p in published]}


def _item(item: MemoryItem | ActivityItem | FeedbackItem | ImportanceItem) -> BatchItem:
    if isinstance(item, MemoryItem):
        return _note(item)
    if isinstance(item, ActivityItem):
        return ActivityEntry(
            item.text, item.category, item.tags, item.source, item.importance, item.ts, item.key
        )
    if isinstance(item, FeedbackItem):
        return Rating(item.ids, item.outcome, item.concepts, item.text, item.key)
    return ImportanceChange(item.memory_id, item.importance, item.key)


def read(body: ReadIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Memories for the query's concepts, direct and through links, each with the path that brought it."""
    values = ReadRequest(**body.__dict__)
    with request.app.state.metrics.read_seconds.labels(body.depth).time():
        found = _application(request).read(caller, values)
    return responses.read_view(found)


def find_chain(body: ChainIn, request: Request, caller: Caller) -> dict[str, Any]:
    """The strongest chains of links between the given concepts, with the hidden concepts between."""
    values = ChainRequest(body.concepts, body.text, body.floor, body.after)
    with request.app.state.metrics.read_seconds.labels("chain").time():
        found = _application(request).chain(caller, values)
    return responses.chains_view(found)


def metrics(request: Request, caller: Caller) -> Response:
    """Prometheus metrics: refusals, read latency, appends, and per tenant the fold lag,
    snapshot age and size, dead letters; failed jobs. Needs an operator key."""
    _application(request).keys.require_operator(caller)
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


def set_importance(
    memory_id: str, body: ImportanceIn, request: Request, caller: Caller
) -> dict[str, Any]:
    """Change a memory's importance (1-5); it scales its rank and slows its decay."""
    position = _application(request).set_importance(caller, memory_id, body.importance, body.key)
    return {"position": str(position), "id": memory_id, "importance": body.importance}


def log_activity(body: ActivityIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Append an activity-log entry (episodic memory); its concepts also feed the links."""
    entry = ActivityEntry(
        body.text, body.category, body.tags, body.source, body.importance, body.ts, body.key
    )
    return responses.written_view(_application(request).log_activity(caller, entry))


def list_activities(
    request: Request,
    caller: Caller,
    date: Annotated[str | None, Query(max_length=10, description="One day, YYYY-MM-DD")] = None,
    when: q.When = None,
    start: q.Start = None,
    end: q.End = None,
    category: q.Category = None,
    keyword: Annotated[
        str | None, Query(max_length=100, description="A concept or a piece of text")
    ] = None,
    source: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(json_schema_extra={"minimum": 1, "maximum": 1000})] = 100,
    tz: q.Zone = None,
) -> dict[str, Any]:
    """Activity entries in a day or range (default: the last 7 days), newest first."""
    query = ActivityQuery(date, start, end, when, category, keyword, source, limit, tz)
    return responses.activities_view(_application(request).activities(caller, query))


def summarise_activities(
    request: Request,
    caller: Caller,
    period: Annotated[
        Literal["day", "week", "month"], Query(description="day, week or month")
    ] = "day",
    when: q.When = None,
    start: q.Start = None,
    end: q.End = None,
    category: q.Category = None,
    tz: q.Zone = None,
) -> dict[str, Any]:
    """Per day, week or month: entry count, categories, top concepts and the most important entries."""
    query = ActivityQuery(None, start, end, when, category, tz=tz, period=period)
    return responses.summary_view(_application(request).summary(caller, query))


def ingest_document(body: DocumentIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Cut a document into sentences (or windows) and link the concepts within each."""
    document = Document(body.title, body.text, body.scope, body.source, body.key)
    return responses.ingested_view(_application(request).ingest(caller, document))


def give_feedback(body: FeedbackIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Teach the links between the query's concepts and the concepts of the memories an answer used."""
    rating = Rating(body.ids, body.outcome, body.concepts, body.text, body.key)
    return responses.rated_view(_application(request).give_feedback(caller, rating))


def graph(
    request: Request,
    caller: Caller,
    concepts: Annotated[
        list[Annotated[str, Query(max_length=100)]],
        Query(
            description="1 to 20 seed concepts",
            json_schema_extra={"minItems": 1, "maxItems": 20, "items": CONCEPT_SCHEMA},
        ),
    ],
    hops: Annotated[
        int,
        Query(
            description="Links followed from the seeds, 1 to 3",
            json_schema_extra={"minimum": 1, "maximum": 3},
        ),
    ] = 1,
) -> dict[str, Any]:
    """The links around the given concepts: weight, co-occurrence count, learned delta, last change."""
    return responses.neighbourhood_view(_application(request).graph(caller, concepts, hops))


def state(
    request: Request,
    caller: Caller,
    as_of: Annotated[
        str | None, Query(min_length=1, max_length=64, description="A position or an ISO time")
    ] = None,
    without_feedback: bool = False,
) -> dict[str, Any]:
    """Position, content hash and sizes of the served (or a rebuilt) state. A rebuild past
    ASSOCMEM_READ_TIMEOUT answers 503 `read_timeout`, saying how far it has come, and goes
    on: the same request again is answered from it."""
    return responses.state_view(_application(request).state(caller, as_of, without_feedback))


def jobs(request: Request, caller: Caller) -> dict[str, Any]:
    """The pipeline's jobs (RQ): queued, running, waiting for a retry, failed with the error."""
    return responses.jobs_view(_application(request).jobs.all(caller))


JobId = Annotated[
    str,
    Path(pattern=r"^[A-Za-z0-9_-]{1,100}$", description="A job's id (what RQ takes as one)"),
]


def requeue_job(job_id: JobId, request: Request, caller: Caller) -> dict[str, Any]:
    """Queue a failed job again."""
    return responses.job_view(_application(request).jobs.requeue(caller, job_id))


def job(job_id: JobId, request: Request, caller: Caller) -> dict[str, Any]:
    """One job: its state, progress while it runs, and its report once finished."""
    return responses.job_view(_application(request).job(caller, job_id))


def consolidate(body: ConsolidateIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Queue a sleep consolidation of the tenant now (it also runs nightly); follow it at
    /v1/jobs/{id}: its progress, then its report."""
    return responses.job_view(_application(request).jobs.consolidate(caller, body.dry_run))


def archive_now(request: Request, caller: Caller) -> dict[str, Any]:
    """Queue an archive run now (it also runs nightly): log entries older than the retention
    window, already in a snapshot, move to compressed segments; follow it at /v1/jobs/{id}."""
    return responses.job_view(_application(request).jobs.archive(caller))


def forget(body: ForgetIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Erase every event of one user, agent, session or namespace of the tenant (or the
    whole tenant) from the log, its archive, the snapshots and the store's files; events
    appended meanwhile are kept. Follow the job at /v1/jobs/{id}: its result is the report."""
    named = [(k, v) for k, v in body.__dict__.items() if v is not None]
    if len(named) != 1:
        raise HTTPException(
            422, "name exactly one subject: user, agent, session, namespace or tenant"
        )
    [(kind, value)] = named
    return responses.job_view(_application(request).forget(caller, kind, value))


def expire_now(request: Request, caller: Caller) -> dict[str, Any]:
    """Queue an expiry pass now (it also runs nightly): the memories past their `expires_at`
    are erased for real, as `forget` erases (reads leave them out from the moment they
    expire)."""
    return responses.job_view(_application(request).jobs.expire(caller))


def archive_manifest(request: Request, caller: Caller) -> dict[str, Any]:
    """The archive's segments, oldest first: first and last position, entries, bytes."""
    return responses.archive_view(_application(request).jobs.segments(caller))


def health(request: Request, caller: Caller) -> dict[str, Any]:
    """The store answers; the log's length and the position this process has folded up to."""
    return responses.health_view(_application(request).health(caller))


_ROUTES = [
    ("/v1/memories", write_memory, "POST", 202, out.WrittenOut),
    ("/v1/memories/batch", write_memories, "POST", 202, out.BatchOut),
    ("/v1/events/batch", publish_events, "POST", 202, out.PublishedOut),
    ("/v1/read", read, "POST", 200, out.ReadOut),
    ("/v1/feedback", give_feedback, "POST", 202, out.RatedOut),
    ("/v1/chain", find_chain, "POST", 200, out.ChainsOut),
    ("/v1/memories/{memory_id}/importance", set_importance, "POST", 202, out.ImportanceOut),
    ("/v1/activities", log_activity, "POST", 202, out.WrittenOut),
    ("/v1/activities", list_activities, "GET", 200, out.ActivitiesOut),
    ("/v1/activities/summary", summarise_activities, "GET", 200, out.SummaryOut),
    ("/v1/documents", ingest_document, "POST", 202, out.IngestedOut),
    ("/v1/graph", graph, "GET", 200, out.GraphOut),
    ("/v1/state", state, "GET", 200, out.StateOut),
    ("/v1/health", health, "GET", 200, out.HealthOut),
    ("/v1/jobs", jobs, "GET", 200, out.JobsOut),
    ("/v1/jobs/{job_id}", job, "GET", 200, out.Job),
    ("/v1/jobs/{job_id}/requeue", requeue_job, "POST", 202, out.Job),
    ("/v1/consolidate", consolidate, "POST", 202, out.Job),
    ("/v1/archive", archive_now, "POST", 202, out.Job),
    ("/v1/expire", expire_now, "POST", 202, out.Job),
    ("/v1/archive", archive_manifest, "GET", 200, out.ArchiveOut),
    ("/v1/forget", forget, "POST", 202, out.Job),
]


LIGHT_TEXT = 2000
"""Characters of a read's text above which it runs off the event loop."""


def _is_light(body: ReadIn | ChainIn) -> bool:
    """Served by the live state in about a millisecond: not long text, and not a state
    rebuilt for `as_of` or `without_feedback` (seconds of folding, which on the loop held
    every other request, health included, for as long)."""
    if isinstance(body, ReadIn) and (body.as_of is not None or body.without_feedback):
        return False
    return len(body.text or "") <= LIGHT_TEXT


_ON_THE_LOOP = {read, find_chain}
"""Run on the event loop while the served state is settled (loaded, nobody folding): a
read holds the GIL nearly throughout (a millisecond of numpy plus one Redis round trip),
so the two thread hand-offs of the pool cost more than they let overlap. The tail a read
then folds is what came in since the last background refresh (0.5 s)."""
