"""An RQ worker for assocmem's jobs, with the fold scheduler running beside it."""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from rq import Queue, SimpleWorker
from rq.exceptions import StopRequested
from rq.executions import Execution
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.scheduler import RQScheduler
from rq.serializers import JSONSerializer
from rq.worker import WorkerStatus

from assocmem.engine.state.note_concepts import NATIVE, NOT_NATIVE
from assocmem.workers.jobs import fold_job  # noqa: F401 - imported before forking, so each job starts warm
from assocmem.workers.jobs.job_list import LAST_ERROR
from assocmem.workers.jobs.predecessor import retry_predecessor_jobs
from assocmem.workers.jobs.scheduler import run_scheduler
from assocmem.workers.runtime.native_threads import limit_native_threads
from assocmem.workers.runtime.services import Runtime, use_runtime
from assocmem.workers.runtime.stop_signals import block as block_stop_signals
from assocmem.workers.runtime.stop_signals import unblock as unblock_stop_signals
from assocmem.workers.store.redis.errors import Outage, wait_until_writable

log = logging.getLogger(__name__)

MAINTENANCE_INTERVAL = 30
"""Seconds between a worker's maintenance rounds, where abandoned jobs (their worker died)
are retried: RQ's default is 10 minutes."""
RETRY_TICK = 1.0
"""Seconds between two looks for retries that are due (a failed fold waits 1, 5, 30 s)."""
PUBSUB_WAIT = 1.0
"""Seconds RQ's pubsub thread (commands such as a kill of the running job) waits for a
message before it looks whether it is to stop. RQ waits 60 s, and a worker's unsubscribing
as it stops (redis-py's stop() joins the thread) waited all of it whenever the thread saw
the unsubscription first: a burst worker, or a stopping one, hung for a minute."""
HEARTBEAT_EVERY = 10
"""Seconds between two heartbeats of a running job."""
HEARTBEAT_TTL = 30
"""Seconds a running job's heartbeat lasts. A job whose worker was killed is abandoned once
it lapses, and retried at the next maintenance round of a live worker: within
HEARTBEAT_TTL + MAINTENANCE_INTERVAL (60 s) of the kill, not after the job's whole timeout
(RQ's SimpleWorker beats once, for the timeout plus a minute). A worker `up` starts in place
of the dead one retries it as it starts (workers/jobs/predecessor.py)."""


class HeartbeatWorker(SimpleWorker):
    """Runs jobs in its own process, unforked (a fold job reuses the state the previous one
    folded), with a thread beating the job's heartbeat while it runs."""

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        return HEARTBEAT_TTL

    @property
    def dequeue_timeout(self) -> int:
        # RQ runs a maintenance round only between two waits for a job, and waits its
        # worker_ttl less 15 s (405 s): an idle worker left a killed worker's job that long,
        # not the minute MAINTENANCE_INTERVAL promises
        return MAINTENANCE_INTERVAL

    def subscribe(self) -> None:
        # RQ's, but its thread waits PUBSUB_WAIT for a message, not 60 s
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=PUBSUB_WAIT, daemon=True, exception_handler=self._pubsub_exception_handler
        )

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        super().bootstrap(*args, **kwargs)  # starts RQ's pubsub thread
        unblock_stop_signals()  # blocked by run_worker, so that its threads block them

    def _shutdown(self) -> None:
        # RQ's signal handler stops an idle worker by raising StopRequested wherever its main
        # thread is. In a log line (RQ's maintenance logs one per queue) logging swallows it,
        # and the worker, told to stop, waited for a job for up to 405 s: here, beside two
        # busy cores, 1 SIGTERM in 4 to 1 in 100 sent just after a start. So it is kept too.
        self._stop_requested = True
        super()._shutdown()

    def run_maintenance_tasks(self) -> None:
        super().run_maintenance_tasks()
        # RQ's wait for a job (it runs the maintenance first) checks no request: stop here
        if self._stop_requested and self.get_state() != WorkerStatus.BUSY:
            raise StopRequested()

    def execute_job(self, job: Job, queue: Queue) -> None:
        execution = self.prepare_execution(job)
        stop = threading.Event()
        beat = threading.Thread(
            target=self._beat, args=(job, execution, stop), name="job-heartbeat", daemon=True
        )
        beat.start()
        try:
            self.perform_job(job, queue, execution)
        finally:
            stop.set()
            beat.join()
        self.set_state(WorkerStatus.IDLE)

    def handle_job_success(
        self,
        job: Job,
        queue: Queue,
        started_job_registry: StartedJobRegistry,
        execution: Execution,
    ) -> None:
        forget_lost_executions(job)
        super().handle_job_success(job, queue, started_job_registry, execution)

    def handle_job_failure(
        self,
        job: Job,
        queue: Queue,
        started_job_registry: StartedJobRegistry | None = None,
        exc_string: str = "",
        execution: Execution | None = None,
    ) -> None:
        # RQ records the error of a job's last attempt only; `assocmem jobs` says why one
        # waits for a retry
        job.meta[LAST_ERROR] = exc_string.strip().splitlines()[-1] if exc_string.strip() else ""
        job.save_meta()
        super().handle_job_failure(job, queue, started_job_registry, exc_string, execution)

    def _beat(self, job: Job, execution: Execution, stop: threading.Event) -> None:
        block_stop_signals()
        outage = Outage(f"heartbeat of job {job.id}")
        while not stop.wait(HEARTBEAT_EVERY):
            try:
                self.maintain_heartbeats(job, execution)
                outage.passed()
            except redis.RedisError as exc:
                outage.failed(exc, HEARTBEAT_EVERY)


def forget_lost_executions(job: Job) -> None:
    """Take out of `job`'s execution registry the runs whose record has expired.

    The run of a killed worker keeps its id there a minute longer than its record (RQ 3.0
    scores it 60 s past its TTL), and deleting a finished job (a fold keeps no result) fetches
    every run listed: a missing record raised, and the fold that had just published was
    recorded as failed, with one retry fewer."""
    registry = job.execution_registry
    ids = registry.get_execution_ids()
    if not ids:
        return
    keys = [Execution(id=i, job_id=job.id, connection=job.connection).key for i in ids]
    with job.connection.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.exists(key)
        found = pipe.execute()
    lost = [i for i, exists in zip(ids, found, strict=True) if not exists]
    if lost:
        job.connection.zrem(registry.key, *lost)


def run_retries(runtime: Runtime, stop: threading.Event) -> None:
    """Move jobs whose retry is due from RQ's scheduled registries to their queues.

    RQ's own scheduler, run in a thread of this process: RQ forks it into a child that
    outlives a worker killed with SIGKILL, and a standby tries to take a dead one's locks
    only every ten minutes, where this loop tries every tick."""
    scheduler = RQScheduler(
        runtime.queues(), connection=runtime.queue_connection, serializer=JSONSerializer
    )
    outage = Outage("moving due retries")
    try:
        while not stop.wait(RETRY_TICK):
            try:
                if scheduler.acquired_locks != {q.name for q in runtime.queues()}:
                    scheduler.acquire_locks()
                if scheduler.acquired_locks:
                    scheduler.heartbeat()
                    scheduler.enqueue_scheduled_jobs()
                outage.passed()
            except redis.RedisError as exc:
                outage.failed(exc, RETRY_TICK)
    finally:
        try:
            scheduler.release_locks()
        except redis.RedisError:
            pass


def run_worker(runtime: Runtime, burst: bool = False) -> None:
    limit_native_threads()
    if not NATIVE:
        log.warning(NOT_NATIVE)
    use_runtime(runtime)
    stop = threading.Event()
    assert runtime.queue_connection is not None, "a worker needs Redis"
    wait_until_writable(runtime.queue_connection, "worker", stop)
    try:
        retry_predecessor_jobs(runtime.queue_connection)
    except redis.RedisError as exc:  # then they are retried as any abandoned job
        log.warning("could not retry the jobs of the worker this one replaces: %s", exc)
    # Until RQ's worker has started its threads (HeartbeatWorker.bootstrap): every thread
    # started meanwhile blocks them too. A stop signal meanwhile waits, then ends the process
    # as it would have at once (RQ's handlers are not in place yet).
    block_stop_signals()
    helpers = [
        threading.Thread(target=run_scheduler, args=(runtime, stop), name="fold-scheduler"),
        threading.Thread(target=run_retries, args=(runtime, stop), name="retry-scheduler"),
    ]
    if not burst:
        for helper in helpers:
            helper.daemon = True
            helper.start()
    try:
        worker = HeartbeatWorker(
            runtime.queues(),
            connection=runtime.queue_connection,
            serializer=JSONSerializer,
            maintenance_interval=MAINTENANCE_INTERVAL,
        )
        worker.work(burst=burst, with_scheduler=False)
    finally:
        stop.set()
