"""An RQ worker for assocmem's jobs, with the fold scheduler running beside it."""

from __future__ import annotations

import threading

from rq import SimpleWorker
from rq.serializers import JSONSerializer

from . import fold_job  # noqa: F401 - imported before forking, so each job starts warm
from .native_threads import limit_native_threads
from .runtime import Runtime, use_runtime
from .scheduler import run_scheduler

MAINTENANCE_INTERVAL = 30
"""Seconds between a worker's maintenance rounds, where abandoned jobs (their worker died)
are retried: RQ's default is 10 minutes."""


def run_worker(runtime: Runtime, burst: bool = False) -> None:
    limit_native_threads()
    use_runtime(runtime)
    stop = threading.Event()
    scheduler = threading.Thread(
        target=run_scheduler, args=(runtime, stop), name="fold-scheduler", daemon=True
    )
    if not burst:
        scheduler.start()
    try:
        # Unforked, so a fold job reuses the state the previous one published (fold_job._folded).
        worker = SimpleWorker(
            runtime.queues(),
            connection=runtime.queue_connection,
            serializer=JSONSerializer,
            maintenance_interval=MAINTENANCE_INTERVAL,
        )
        worker.work(burst=burst, with_scheduler=False)
    finally:
        stop.set()
