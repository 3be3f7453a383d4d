"""A worker told to stop while it logs a line stops, rather than wait for a job.

RQ's signal handler stops an idle worker by raising StopRequested wherever its main thread
is; logging swallows what is raised while it writes a line. Here the formatter takes the
signal as the line of RQ's maintenance is written, as it came here under load: the worker
then waited for a job, up to 405 s, and a queued job would have run after the stop."""

from __future__ import annotations

import io
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from rq import Queue
from rq.exceptions import StopRequested
from rq.serializers import JSONSerializer

from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.worker import HeartbeatWorker
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE


class _SignalWhileFormatting(logging.Formatter):
    """Sends the worker its stop signal while formatting the maintenance's line."""

    def __init__(self, worker: HeartbeatWorker) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        if "cleaning registries" in str(record.msg):
            self.worker.request_stop(signal.SIGTERM, None)
        return super().format(record)


@pytest.fixture
def worker(runtime: Runtime) -> Iterator[tuple[HeartbeatWorker, Queue]]:
    """A worker whose stop signal comes in a log line, and a job queued for it."""
    queue = runtime.queue(MAINTENANCE_QUEUE)
    queue.enqueue_call("time.sleep", args=(0,), job_id="after-the-stop")
    worker = HeartbeatWorker(queue, connection=queue.connection, serializer=JSONSerializer)
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(_SignalWhileFormatting(worker))
    logger = logging.getLogger("rq.worker")
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    logger.addHandler(handler)
    try:
        yield worker, queue
    finally:
        logger.removeHandler(handler)
        for sig, handler_before in handlers.items():  # RQ's are set in this process
            signal.signal(sig, handler_before)


def test_a_stop_lost_in_a_log_line_stops_the_work_loop_before_the_next_job(
    worker: tuple[HeartbeatWorker, Queue],
) -> None:
    stopping, queue = worker
    stopping.work(burst=True)  # its maintenance runs first
    assert queue.job_ids == ["after-the-stop"]


def test_a_stop_lost_in_a_log_line_stops_the_wait_for_a_job(
    worker: tuple[HeartbeatWorker, Queue],
) -> None:
    """The wait runs the maintenance when it is due, then pops a job: in a long wait, or
    one that RQ's loop begins again after a lost connection."""
    stopping, queue = worker
    stopping.bootstrap()
    try:
        with pytest.raises(StopRequested):
            stopping.dequeue_job_and_maintain_ttl(None)  # no wait: a job is there to pop
    finally:
        stopping.teardown()
    assert queue.job_ids == ["after-the-stop"]


def test_a_worker_whose_pubsub_thread_saw_its_unsubscription_first_stops_at_once(
    runtime: Runtime,
) -> None:
    """RQ's pubsub thread, once it has read the unsubscription, waits for the next one; a
    worker's stop then joined it for RQ's whole 60 s (seen as burst workers that hung for a
    minute under a parallel test run)."""
    queue = runtime.queue(MAINTENANCE_QUEUE)
    worker = HeartbeatWorker(queue, connection=queue.connection, serializer=JSONSerializer)
    worker.subscribe()
    wait_until(lambda: worker.pubsub.subscribed)
    worker.pubsub.unsubscribe()
    wait_until(lambda: not worker.pubsub.subscribed)  # the thread read it: the race lost
    stopping = threading.Thread(target=worker.unsubscribe, daemon=True)
    stopping.start()
    stopping.join(timeout=20)  # a generous bound: the wait was 60 s, it is now about 1
    assert not stopping.is_alive(), "the worker's stop waits for its pubsub thread"


def wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the pubsub thread never got there")
