"""Parts of a replay worked out in processes of their own: the served state's hash, and the
second half of the fold.

A replay checks the fold from zero against the served state (the newest snapshot at or
before a position, plus the events after it). Loading and hashing that state was a
good part of a replay in the worker, and holding it through the fold raised the worker's
peak memory by half. In a child process on the other core, it costs the replay neither, as the
fold from zero runs here. The child reads the same Redis, so a runtime with in-memory
stores has no such helper.

A second child may fold the second half of the replay (`SecondHalf`): from a snapshot kept
near the middle of the log, whose hash the fold from zero checks when it gets there.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import dataclasses
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from assocmem.workers.runtime.child_process import exit_with
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.heap import collection_held
from assocmem.workers.state.rebuild import Rebuild, fold_log, rebuild, starting_state

log = logging.getLogger(__name__)
T = TypeVar("T")


_reached: ctypes.c_int64 | None = None
"""In a child: where its fold has reached (a position's milliseconds), for its parent."""


def _started(parent: int, reached: ctypes.c_int64) -> None:
    global _reached
    _reached = reached
    exit_with(parent)


class InChild(Generic[T]):
    """A result on its way from a child process; `result` waits for it, `close` lets the
    child go (the caller closes it whatever happened). `reached`: where the child's fold
    is, in a position's milliseconds (0 until it says)."""

    def __init__(self, what: str, function: Callable[..., tuple[T, float]], *args: object) -> None:
        """`function(*args)` in the child returns its result and the seconds it took."""
        self._what = what
        # spawn, never fork: the caller (a worker, the API) has threads that may hold locks
        context = multiprocessing.get_context("spawn")
        self._reached = context.Value("q", 0, lock=False)
        self._executor = concurrent.futures.ProcessPoolExecutor(
            1, mp_context=context, initializer=_started, initargs=(os.getpid(), self._reached)
        )
        self._future = self._executor.submit(function, *args)

    def reached(self) -> int:
        return int(self._reached.value)

    def result(self, meanwhile: Callable[[], None] | None = None) -> T | None:
        """None if the child failed (it is logged, and the caller does the work itself).
        `meanwhile` is called about twice a second while it waits, and once it is done."""
        try:
            if meanwhile is not None:
                while not concurrent.futures.wait([self._future], timeout=0.5).done:
                    meanwhile()
                meanwhile()
            found, took = self._future.result()
            log.info("%s: worked out in a child process in %.2f s", self._what, took)
            return found
        except Exception:  # whatever the child met, the replay goes on without it
            log.exception("%s could not be worked out in a child process", self._what)
            return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._executor.shutdown(wait=False, cancel_futures=True)


class ServedHash(InChild[str]):
    """The content hash of the state served at `upto`."""

    def __init__(self, settings: Settings, tenant: str, upto: Position) -> None:
        super().__init__("the served state's hash", served_hash, settings, tenant, str(upto))


@dataclasses.dataclass(frozen=True, slots=True)
class Halves:
    start: str
    """Content hash of the snapshot kept at the middle."""
    end: str
    """Content hash of that snapshot folded on to the end."""
    position: str
    """Where that fold ended."""


class SecondHalf(InChild[Halves | None]):
    """The snapshot kept at `middle`, hashed, then folded on to `upto` and hashed again;
    None if no readable snapshot is kept there."""

    def __init__(self, settings: Settings, tenant: str, middle: Position, upto: Position) -> None:
        super().__init__(
            "the second half of the replay",
            second_half,
            settings,
            tenant,
            str(middle),
            str(upto),
        )


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


def second_half(
    settings: Settings, tenant: str, middle: str, upto: str
) -> tuple[Halves | None, float]:
    """In the child: see SecondHalf."""
    start = time.perf_counter()
    runtime = Runtime.connect(settings)
    try:
        state = starting_state(runtime.snapshots, tenant, Position.parse(middle))
        if state.position != Position.parse(middle):  # unreadable: an older one was loaded
            return None, time.perf_counter() - start
        with collection_held():
            at_middle = content_hash(state)
        fold_log(state, runtime.log, tenant, Position.parse(upto), progress=_report)
        with collection_held():
            found = Halves(at_middle, content_hash(state), str(state.position))
        return found, time.perf_counter() - start
    finally:
        runtime.close()


def _report(state: State) -> None:
    if _reached is not None:
        _reached.value = state.position.ms
