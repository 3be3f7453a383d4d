"""`up` restarts a worker killed in the middle of a job, and the new worker runs that job
again as it starts, not once its heartbeat has lapsed and a maintenance round came (a
minute later): `up` tells it the dead worker's pid."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from rq import Retry, Worker
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from assocmem.api.ops.run_file import read_run_file
from assocmem.workers.store.redis.keys import MAINTENANCE_QUEUE
from tests.e2e.pipeline import Pipeline


def test_a_job_whose_worker_up_restarts_after_a_kill_9_runs_again_at_once(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data")
    try:
        runtime = up.runtime()
        connection = runtime.queue_connection
        assert connection is not None
        runtime.queue(MAINTENANCE_QUEUE).enqueue_call(
            "time.sleep", args=(600,), job_id="long", retry=Retry(max=1)
        )

        def job() -> Job:
            return Job.fetch("long", connection=connection, serializer=JSONSerializer)

        deadline = time.monotonic() + 60
        while job().get_status() != JobStatus.STARTED:
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.1)
        [running] = [
            w.pid for w in Worker.all(connection=connection) if w.get_current_job_id() == "long"
        ]
        assert running in up.info.worker_pids
        os.kill(running, signal.SIGKILL)

        # Run again on its one retry, by the worker `up` started in place of the dead one,
        # which took the run for abandoned as it started (without it, the heartbeat lapses
        # and a maintenance round retries it, a minute later, and no worker says so)
        deadline = time.monotonic() + 120
        while not (job().retries_left == 0 and job().get_status() == JobStatus.STARTED):
            assert time.monotonic() < deadline, "the job was not run again"
            time.sleep(0.1)
        info = read_run_file(up.home)
        assert info is not None and running not in info.worker_pids
        said = "".join(log.read_text() for log in (up.home / "logs").glob("worker-*.log"))
        assert f"job long: its worker (pid {running}) died while running it" in said
    finally:
        up.stop()
