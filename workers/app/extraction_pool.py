"""Concept extraction of large batches across processes, so one API process uses every core.

Extraction is most of what a batch of long notes costs the API, and it holds the GIL: a
batch of at least POOLED_TEXTS texts is cut into parts, one extracted here and the rest
in helper processes at the same time. Helpers start on the first such batch (each imports
and loads its word tables once); until one has, batches are extracted here rather than
wait for it (the first batch of a fresh API otherwise waited for the helpers' start).
Extraction is a pure function, so where it ran changes nothing in
what is appended.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
import time

from assocmem.engine.text.extraction import Extraction, extract, warm_up
from assocmem.workers.runtime.child_process import exit_with
from assocmem.workers.state.heap import collect_young_less_often

POOLED_TEXTS = 64
"""Texts in a batch from which it is worth sending some to helpers (fewer: all here)."""
SHARE_SMOOTHING = 0.3
"""Weight of the latest batch in the share of characters extracted here (`Balance`)."""
SHARE_BOUNDS = (0.05, 0.95)
"""The least and most of a batch extracted here: each side keeps a part, so that each
goes on being measured."""


def extract_all(texts: list[str]) -> list[Extraction]:
    return [extract(text) for text in texts]


def _timed(texts: list[str]) -> tuple[list[Extraction], float]:
    """The extractions and the seconds they took (in a helper: its own time, not the
    time its texts and results spent in transit)."""
    start = time.perf_counter()
    extracted = extract_all(texts)
    return extracted, time.perf_counter() - start


def _characters(texts: list[str]) -> int:
    return sum(map(len, texts))


def _warmed() -> bool:
    """A helper's first task: its answer means the helper has loaded its tables."""
    return True


def _start_helper(parent: int) -> None:
    exit_with(parent)  # a helper SIGKILLed with the API must not wait for work for ever
    collect_young_less_often()
    warm_up()


class Balance:
    """The share of a batch's characters to extract here so that this process and its
    helpers end together: this process also serves requests and folds, so it extracts
    more slowly than a helper, by as much as its load makes it. Each batch measures the
    characters each side extracted a second and moves the share towards what would have
    made them end together. With an even split the API's part ended last, and a burst of
    writes went a tenth slower than with the share measured."""

    def __init__(self, parts: int) -> None:
        self.here = 1 / parts

    def measured(self, here_rate: float, away_rate: float) -> None:
        """Characters a second extracted here, and by all helpers together (each in its
        own time: they work at once)."""
        if here_rate <= 0 or away_rate <= 0:
            return
        ideal = here_rate / (here_rate + away_rate)
        share = self.here + SHARE_SMOOTHING * (ideal - self.here)
        self.here = min(max(share, SHARE_BOUNDS[0]), SHARE_BOUNDS[1])


class ExtractionPool:
    def __init__(self, helpers: int) -> None:
        self.helpers = helpers
        self.balance = Balance(helpers + 1)
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
        parts = _split(texts, self.helpers + 1, self.balance.here)
        try:
            away = [executor.submit(_timed, part) for part in parts[1:]]
        except concurrent.futures.BrokenExecutor:  # a helper died: start anew next time
            self._forget(executor)
            return extract_all(texts)
        here, here_took = _timed(parts[0])
        try:
            done = [future.result() for future in away]
        except concurrent.futures.BrokenExecutor:
            self._forget(executor)
            return here + extract_all([t for part in parts[1:] for t in part])
        rates = [
            _characters(part) / took
            for part, (_, took) in zip(parts[1:], done, strict=True)
            if took > 0
        ]
        self.balance.measured(
            _characters(parts[0]) / here_took if here_took > 0 else 0.0, sum(rates)
        )
        return here + [e for extracted, _ in done for e in extracted]

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


def _split(texts: list[str], parts: int, first: float) -> list[list[str]]:
    """`texts` in `parts` runs, in order: the first of about `first` of the characters, the
    others of about as many each."""
    total = sum(map(len, texts))
    rest = (1 - first) / max(1, parts - 1)
    runs: list[list[str]] = [[]]
    filled = 0
    for text in texts:
        if filled >= total * (first + (len(runs) - 1) * rest) and len(runs) < parts:
            runs.append([])
        runs[-1].append(text)
        filled += len(text)
    return runs
