"""The log read one batch ahead of the fold (workers/store/read_ahead.py, through `iter_entries`):
the same batches in the same order, a failed read raised where its batch would be, and no
reading left running once the batches are no longer wanted."""

from __future__ import annotations

import threading
import time

import pytest

from assocmem.engine.position import ZERO, Position
from assocmem.workers.store.ports import Entry, iter_entries


class Log:
    """The entries of a log, read as `EventLog.entries` reads them; `fail_at`: the read
    (counted from 1) that raises."""

    def __init__(self, count: int, fail_at: int | None = None) -> None:
        self.stored = [(Position(1000 + n, 0), b"%d" % n) for n in range(count)]
        self.reads = 0
        self.fail_at = fail_at

    def entries(
        self, tenant: str, after: Position, upto: Position | None = None, count: int = 1000
    ) -> list[Entry]:
        self.reads += 1
        if self.reads == self.fail_at:
            raise ConnectionError("Redis went away")
        found = [e for e in self.stored if e[0] > after and (upto is None or e[0] <= upto)]
        return found[:count]


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "log-read-ahead"]


@pytest.mark.parametrize("count", [0, 3, 10, 11, 25])
def test_every_entry_comes_once_in_order_in_batches(count: int) -> None:
    log = Log(count)
    batches = list(iter_entries(log, "t", ZERO, batch=5))  # type: ignore[arg-type]
    assert [e for b in batches for e in b] == log.stored
    assert all(len(b) == 5 for b in batches[:-1]) and all(batches)


def test_only_entries_up_to_the_end_asked_for_are_read() -> None:
    log = Log(30)
    batches = list(iter_entries(log, "t", ZERO, log.stored[11][0], batch=5))  # type: ignore[arg-type]
    assert [e for b in batches for e in b] == log.stored[:12]


def test_a_failed_read_is_raised_after_the_batches_read_before_it() -> None:
    log = Log(30, fail_at=3)
    chunks = iter_entries(log, "t", ZERO, batch=5)  # type: ignore[arg-type]
    assert next(chunks) == log.stored[:5] and next(chunks) == log.stored[5:10]
    with pytest.raises(ConnectionError, match="went away"):
        next(chunks)


def test_a_caller_that_stops_early_leaves_no_reading_behind() -> None:
    log = Log(100_000)
    chunks = iter_entries(log, "t", ZERO, batch=5)  # type: ignore[arg-type]
    assert next(chunks) == log.stored[:5]
    chunks.close()
    deadline = time.monotonic() + 5
    while readers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not readers()
    assert log.reads <= 4  # the first, and at most one batch ahead (and one in hand)
