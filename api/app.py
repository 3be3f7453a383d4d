"""The HTTP app: built by `create_app` with an explicit route list and one lifespan."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from assocmem.engine.extraction import warm_up
from assocmem.workers.errors import StoreError, StoreUnavailable
from assocmem.workers.native_threads import limit_native_threads
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings

from .errors import ApiError
from .schemas import (
    ActivityIn,
    ChainIn,
    DocumentIn,
    FeedbackIn,
    ImportanceIn,
    MemoryBatchIn,
    MemoryIn,
    ReadIn,
)
from .service import MemoryService


class OrjsonResponse(JSONResponse):
    """JSON via orjson: the responses carry many floats and lists, where it is several times faster."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def create_app(settings: Settings) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        limit_native_threads()
        runtime = Runtime.connect(settings)
        service = app.state.service = MemoryService(runtime)
        stop = threading.Event()
        threads = [
            threading.Thread(target=service.live.keep_fresh, args=(stop,), daemon=True),
            threading.Thread(target=service.accesses.run, args=(stop,), daemon=True),
            threading.Thread(target=warm_up, daemon=True),
        ]
        for thread in threads:
            thread.start()
        yield
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        runtime.data.close()
        runtime.queue_connection.close()

    app = FastAPI(
        title="assocmem",
        summary="Long-term associative memory for AI agents.",
        version="0.1.0",
        lifespan=lifespan,
        default_response_class=OrjsonResponse,
    )
    for path, endpoint, method, status in _ROUTES:
        app.add_api_route(path, _responding(endpoint, status), methods=[method], status_code=status)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StoreUnavailable, _store_unavailable)
    app.add_exception_handler(StoreError, _store_error)
    return app


def _responding(endpoint: Callable[..., dict[str, Any]], status: int) -> Callable[..., Response]:
    """The endpoint, returning its dict as an orjson response.

    A returned dict would go through FastAPI's response validation and encoder: a
    pydantic pass over every item, path and weight of a read (0.3 ms of a 2.4 ms read of
    ten short notes, more with long ones). The signature (and so the request parsing and
    the OpenAPI schema of the parameters) is the endpoint's own.
    """

    if endpoint in _ON_THE_LOOP:

        @functools.wraps(endpoint)
        async def respond_here(*args: Any, **kwargs: Any) -> Response:
            if _service(kwargs["request"]).live.settled():
                return OrjsonResponse(endpoint(*args, **kwargs), status_code=status)
            # Loading the state or folding a backlog takes seconds: not on the loop.
            content = await run_in_threadpool(endpoint, *args, **kwargs)
            return OrjsonResponse(content, status_code=status)

        return respond_here

    @functools.wraps(endpoint)
    def respond(*args: Any, **kwargs: Any) -> Response:
        return OrjsonResponse(endpoint(*args, **kwargs), status_code=status)

    return respond


def _service(request: Request) -> MemoryService:
    return request.app.state.service  # type: ignore[no-any-return]


def write_memory(body: MemoryIn, request: Request) -> dict[str, Any]:
    """Append one memory. Concepts are extracted from the text unless given."""
    return _service(request).write([body])[0]


def write_memories(body: MemoryBatchIn, request: Request) -> dict[str, Any]:
    """Append up to 1000 memories atomically, in order."""
    return {"items": _service(request).write(body.items)}


def read(body: ReadIn, request: Request) -> dict[str, Any]:
    """Memories for the query's concepts, direct and through links, each with the path that brought it."""
    return _service(request).read(body)


def find_chain(body: ChainIn, request: Request) -> dict[str, Any]:
    """The strongest chains of links between the given concepts, with the hidden concepts between."""
    return _service(request).chain(body)


def set_importance(memory_id: str, body: ImportanceIn, request: Request) -> dict[str, Any]:
    """Change a memory's importance (1-5); it scales its rank and slows its decay."""
    return _service(request).set_importance(memory_id, body)


def log_activity(body: ActivityIn, request: Request) -> dict[str, Any]:
    """Append an activity-log entry (episodic memory); its concepts also feed the links."""
    return _service(request).log_activity(body)


def list_activities(
    request: Request,
    date: Annotated[str | None, Query(description="One day, YYYY-MM-DD")] = None,
    when: Annotated[
        str | None, Query(description="A time expression: 'last week', '上个月', 'since March'")
    ] = None,
    start: Annotated[float | None, Query(description="Range start, unix seconds")] = None,
    end: Annotated[float | None, Query(description="Range end (exclusive), unix seconds")] = None,
    category: str | None = None,
    keyword: Annotated[str | None, Query(description="A concept or a piece of text")] = None,
    source: str | None = None,
    limit: int = 100,
    tz: Annotated[str | None, Query(description="IANA time zone")] = None,
) -> dict[str, Any]:
    """Activity entries in a day or range (default: the last 7 days), newest first."""
    return _service(request).activities(
        date, start, end, when, category, keyword, source, limit, tz
    )


def summarise_activities(
    request: Request,
    period: Annotated[str, Query(description="day, week or month")] = "day",
    when: Annotated[str | None, Query(description="A time expression")] = None,
    start: float | None = None,
    end: float | None = None,
    category: str | None = None,
    tz: str | None = None,
) -> dict[str, Any]:
    """Per day, week or month: entry count, categories, top concepts and the most important entries."""
    return _service(request).summary(period, start, end, when, category, tz)


def ingest_document(body: DocumentIn, request: Request) -> dict[str, Any]:
    """Cut a document into sentences (or windows) and link the concepts within each."""
    return _service(request).ingest(body)


def give_feedback(body: FeedbackIn, request: Request) -> dict[str, Any]:
    """Teach the links between the query's concepts and the concepts of the memories an answer used."""
    return _service(request).feedback(body)


def graph(
    request: Request,
    concepts: Annotated[list[str], Query(description="1 to 20 seed concepts")],
    depth: Annotated[int, Query(description="Steps from the seeds, 1 to 3")] = 1,
) -> dict[str, Any]:
    """The links around the given concepts: weight, co-occurrence count, learned delta, last change."""
    return _service(request).graph(concepts, depth)


def state(
    request: Request, as_of: str | None = None, without_feedback: bool = False
) -> dict[str, Any]:
    """Position, content hash and sizes of the served (or a rebuilt) state."""
    return _service(request).state(as_of, without_feedback)


def health(request: Request) -> dict[str, Any]:
    service = _service(request)
    service.runtime.data.ping()
    return {
        "status": "ok",
        "tenant": service.tenant,
        "log_length": service.runtime.log.length(service.tenant),
        "served_position": service.live.served_position,
    }


_ROUTES = [
    ("/v1/memories", write_memory, "POST", 202),
    ("/v1/memories/batch", write_memories, "POST", 202),
    ("/v1/read", read, "POST", 200),
    ("/v1/feedback", give_feedback, "POST", 202),
    ("/v1/chain", find_chain, "POST", 200),
    ("/v1/memories/{memory_id}/importance", set_importance, "POST", 202),
    ("/v1/activities", log_activity, "POST", 202),
    ("/v1/activities", list_activities, "GET", 200),
    ("/v1/activities/summary", summarise_activities, "GET", 200),
    ("/v1/documents", ingest_document, "POST", 202),
    ("/v1/graph", graph, "GET", 200),
    ("/v1/state", state, "GET", 200),
    ("/v1/health", health, "GET", 200),
]


_ON_THE_LOOP = {read, find_chain}
"""Run on the event loop while the served state is settled (loaded, nobody folding): a
read holds the GIL nearly throughout (a millisecond of numpy plus one Redis round trip),
so the two thread hand-offs of the pool cost more than they let overlap. The tail a read
then folds is what came in since the last background refresh (0.5 s)."""


def _problem(status: int, title: str, detail: str) -> OrjsonResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    return OrjsonResponse(body, status_code=status, media_type="application/problem+json")


async def _api_error(request: Request, exc: Exception) -> OrjsonResponse:
    assert isinstance(exc, ApiError)
    return _problem(exc.status, "Invalid request" if exc.status < 500 else "Server error", str(exc))


async def _validation_error(request: Request, exc: Exception) -> OrjsonResponse:
    assert isinstance(exc, RequestValidationError)
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"] if p not in ("body", "query"))
        value = error.get("input")
        parts.append(f"{field or 'body'} {value!r} is invalid: {error['msg']}")
    return _problem(422, "Invalid request", "; ".join(parts))


async def _store_unavailable(request: Request, exc: Exception) -> OrjsonResponse:
    return _problem(503, "Store unavailable", str(exc))


async def _store_error(request: Request, exc: Exception) -> OrjsonResponse:
    return _problem(500, "Store error", str(exc))
