"""A process serves many tenants at once: each live state waits on its stream with a
connection of its own, and the calls of requests still find one (redis-py's default pool
of 100 refused them all past about a hundred tenants)."""

from __future__ import annotations

import threading

from assocmem.engine.position import ZERO
from assocmem.workers.runtime.services import Runtime
from tests.stores import write


def test_two_hundred_waiting_tenants_leave_connections_for_requests(runtime: Runtime) -> None:
    write(runtime, ["billing", "timeout"])
    waiting = [
        threading.Thread(target=runtime.log.wait_for_entries, args=(f"t{n}", ZERO, 3.0))
        for n in range(200)
    ]
    for thread in waiting:
        thread.start()
    try:
        assert runtime.log.length("default") == 1  # "Too many connections" before
        assert runtime.keys.all() == []
    finally:
        for thread in waiting:
            thread.join()
