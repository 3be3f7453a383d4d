"""The content hash of the state served at a position, worked out in a process of its own.

A replay checks the fold from zero against the served state (the newest snapshot at or
before a position, plus the events after it). At a million events, loading and hashing
that state took 4-5 s of a replay in the worker (12 s in the child, its start included,
on a slower day), and holding it through the fold raised the worker's peak RSS from 2.9 GB
to 4.0-5.2 GB. In a child process on the other core, it costs the replay neither, as the
fold from zero runs here. The child reads the same Redis, so a runtime with in-memory
stores has no such helper.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import time

from assocmem.engine.position import Position
from assocmem.engine.snapshot import content_hash

from .child_process import exit_with
from .heap import collection_held
from .rebuild import Rebuild, rebuild
from .runtime import Runtime
from .settings import Settings

log = logging.getLogger(__name__)


class ServedHash:
    """A hash on its way from a child process; `result` waits for it, `close` lets the
    child go (the caller closes it whatever happened)."""

    def __init__(self, settings: Settings, tenant: str, upto: Position) -> None:
        # spawn, never fork: the caller (a worker, the API) has threads that may hold locks
        self._executor = concurrent.futures.ProcessPoolExecutor(
            1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=exit_with,
            initargs=(os.getpid(),),
        )
        self._future = self._executor.submit(served_hash, settings, tenant, str(upto))

    def result(self) -> str | None:
        """The served state's content hash; None if the child failed (it is logged, and the
        caller works the hash out itself)."""
        try:
            digest, took = self._future.result()
            log.info("the served state was loaded and hashed in a child process in %.2f s", took)
            return digest
        except Exception:  # whatever the child met, the replay goes on without it
            log.exception("the served state's hash could not be worked out in a child process")
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._executor.shutdown(wait=False, cancel_futures=True)


def served_hash(settings: Settings, tenant: str, upto: str) -> tuple[str, float]:
    """In the child: the content hash of the state served at `upto`, rebuilt from the
    stores, and the seconds that took."""
    start = time.perf_counter()
    runtime = Runtime.connect(settings)
    try:
        state = rebuild(runtime.log, runtime.snapshots, tenant, Rebuild(Position.parse(upto)))
        with collection_held():
            return content_hash(state), time.perf_counter() - start
    finally:
        runtime.close()
