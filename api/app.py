"""The HTTP app: built by `create_app` with an explicit route list and one lifespan."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from assocmem.workers.errors import StoreError, StoreUnavailable
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings

from .errors import ApiError
from .schemas import FeedbackIn, MemoryBatchIn, MemoryIn, ReadIn
from .service import MemoryService


class OrjsonResponse(JSONResponse):
    """JSON via orjson: the responses carry many floats and lists, where it is several times faster."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def create_app(settings: Settings) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Runtime.connect(settings)
        service = app.state.service = MemoryService(runtime)
        stop = threading.Event()
        refresher = threading.Thread(target=service.live.keep_fresh, args=(stop,), daemon=True)
        refresher.start()
        yield
        stop.set()
        refresher.join(timeout=10)
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
        app.add_api_route(path, endpoint, methods=[method], status_code=status)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StoreUnavailable, _store_unavailable)
    app.add_exception_handler(StoreError, _store_error)
    return app


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
    ("/v1/graph", graph, "GET", 200),
    ("/v1/state", state, "GET", 200),
    ("/v1/health", health, "GET", 200),
]


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
