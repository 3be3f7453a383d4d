"""The real API on a real socket (uvicorn in a thread) over real Redis, for the clients."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from assocmem.api.http.app import create_app
from assocmem.workers.runtime.redis_server import free_port
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state import rebuild_cache


@contextlib.contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """The API's URL while it serves."""
    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def slow_rebuilds(monkeypatch: pytest.MonkeyPatch, seconds: float = 0.5) -> None:
    """Every state rebuilt for `as_of` or `without_feedback` takes `seconds` longer, once
    it has said where it starts: a rebuild under way past a short read budget, on any
    machine (a few thousand notes fold in under 0.1 s on a quiet one, as a million events
    take minutes)."""
    rebuild = rebuild_cache.rebuild

    def slowed(*args: Any) -> Any:
        *given, progress = args
        told = []

        def slow_start(state: Any) -> None:
            progress(state)
            if not told:
                told.append(state)
                time.sleep(seconds)

        return rebuild(*given, slow_start)

    monkeypatch.setattr(rebuild_cache, "rebuild", slowed)
