"""Reading the log one batch ahead of a long fold, in a thread.

A fold from zero, a replay or an `as_of` rebuild waited for each batch of entries while
Redis found and sent it; a thread asking for the next batch as soon as one arrives lets
the fold go on meanwhile (the thread waits on the socket outside the interpreter's lock).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assocmem.engine.position import Position
    from assocmem.workers.store.ports import Entry


class ReadAhead:
    """The batches `read` gives (the entries after a position, at most `batch`) from `after`
    on: the first is asked for at once, each next one as soon as the one before arrived.
    An error of a read is raised where its batch would have been. `close` when done."""

    def __init__(
        self, read: Callable[[Position], list[Entry]], after: Position, batch: int
    ) -> None:
        self._read, self._batch = read, batch
        self._ready: queue.Queue[list[Entry] | BaseException] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        # A daemon: one still reading when it is closed ends after that read, and never
        # holds up the process's exit.
        threading.Thread(
            target=self._run, args=(after,), name="log-read-ahead", daemon=True
        ).start()

    def __iter__(self) -> Iterator[list[Entry]]:
        while True:
            item = self._ready.get()
            if isinstance(item, BaseException):
                raise item
            if item:
                yield item
            if len(item) < self._batch:
                return

    def close(self) -> None:
        self._stop.set()

    def _run(self, after: Position) -> None:
        try:
            while not self._stop.is_set():
                chunk = self._read(after)
                self._hand_over(chunk)
                if len(chunk) < self._batch:
                    return
                after = chunk[-1][0]
        except BaseException as exc:  # raised in the reader's thread instead
            self._hand_over(exc)

    def _hand_over(self, item: list[Entry] | BaseException) -> None:
        while not self._stop.is_set():
            try:
                self._ready.put(item, timeout=0.1)
                return
            except queue.Full:
                continue
