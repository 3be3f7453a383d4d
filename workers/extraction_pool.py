"""Concept extraction of large batches across processes, so one API process uses every core.

Extraction is most of what a batch of long notes costs the API, and it holds the GIL: a
batch of at least POOLED_TEXTS texts is cut into parts, one extracted here and the rest
in helper processes at the same time. Helpers start on the first such batch (each imports
and loads its word tables once, about a second); until one has, batches are extracted
here rather than wait for it (the first batch of a fresh API took 1.8 s where
the next took 0.1). Extraction is a pure function, so where it ran changes nothing in
what is appended.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading

from assocmem.engine.extraction import Extraction, extract, warm_up

from .child_process import exit_with
from .heap import collect_young_less_often

POOLED_TEXTS = 64
"""Texts in a batch from which it is worth sending some to helpers (fewer: all here)."""


def extract_all(texts: list[str]) -> list[Extraction]:
    return [extract(text) for text in texts]


def _warmed() -> bool:
    """A helper's first task: its answer means the helper has loaded its tables."""
    return True


def _start_helper(parent: int) -> None:
    exit_with(parent)  # a helper SIGKILLed with the API must not wait for work for ever
    collect_young_less_often()
    warm_up()


class ExtractionPool:
    def __init__(self, helpers: int) -> None:
        self.helpers = helpers
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._warming: concurrent.futures.Future[bool] | None = None
        self._lock = threading.Lock()

    def extract_many(self, texts: list[str]) -> list[Extraction]:
        """The extraction of each text, in order."""
        if self.helpers == 0 or len(texts) < POOLED_TEXTS:
            return extract_all(texts)
        executor = self._warm()
        if executor is None:
            return extract_all(texts)
        parts = _split(texts, self.helpers + 1)
        try:
            away = [executor.submit(extract_all, part) for part in parts[1:]]
        except concurrent.futures.BrokenExecutor:  # a helper died: start anew next time
            self._forget(executor)
            return extract_all(texts)
        here = extract_all(parts[0])
        try:
            return here + [e for future in away for e in future.result()]
        except concurrent.futures.BrokenExecutor:
            self._forget(executor)
            return here + extract_all([t for part in parts[1:] for t in part])

    def ready(self, timeout: float) -> bool:
        """Start the helpers if they are not, and wait up to `timeout` seconds for one to
        have loaded its tables; whether one has."""
        self._warm()
        warming = self._warming
        assert warming is not None
        with contextlib.suppress(
            concurrent.futures.TimeoutError, concurrent.futures.CancelledError
        ):
            warming.exception(timeout)  # a helper that died counts as an answer
        return self._warm() is not None

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
                self._executor = None

    def _warm(self) -> concurrent.futures.ProcessPoolExecutor | None:
        """The helpers, once one of them has loaded its tables; None while none has yet
        (they are started on the first call)."""
        with self._lock:
            if self._executor is None:
                # spawn: never fork this process, whose other threads may hold locks; and
                # no forkserver, which every helper would keep alive after this one died
                self._executor = concurrent.futures.ProcessPoolExecutor(
                    self.helpers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_helper,
                    initargs=(os.getpid(),),
                )
                self._warming = self._executor.submit(_warmed)
            assert self._warming is not None
            return self._executor if self._warming.done() else None

    def _forget(self, executor: concurrent.futures.ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is executor:
                self._executor = None
        executor.shutdown(wait=False, cancel_futures=True)


def _split(texts: list[str], parts: int) -> list[list[str]]:
    """`texts` in `parts` runs of about as many characters each, in order."""
    total = sum(map(len, texts))
    runs: list[list[str]] = [[]]
    filled = 0
    for text in texts:
        if filled >= total * len(runs) / parts and len(runs) < parts:
            runs.append([])
        runs[-1].append(text)
        filled += len(text)
    return runs
