"""A worker `up` starts in place of one that died retries at once the jobs that one was
running, rather than after their heartbeat lapses and a maintenance round comes.

RQ takes a job for abandoned once its heartbeat has lapsed (HEARTBEAT_TTL) and a live
worker's maintenance looks (MAINTENANCE_INTERVAL): up to a minute after a kill -9, the
tenant's fold waiting all that time. `up` knows better: it reaped the dead worker, so it
tells the next one its pid, and the time by which it had died. A worker on this host with
that pid, registered before then, is the dead one (a pid taken again later belongs to a
process born after it), and its runs are made due at once in RQ's registry of started
jobs: the maintenance the new worker runs as it starts retries or fails each one, as RQ
does with any abandoned job.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping
from datetime import UTC

import redis
from rq import Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

log = logging.getLogger(__name__)

PREDECESSOR_PID = "ASSOCMEM_PREDECESSOR_PID"
PREDECESSOR_DIED_BY = "ASSOCMEM_PREDECESSOR_DIED_BY"


def predecessor_env(pid: int, died_by: float) -> dict[str, str]:
    """What `up` tells the process it starts in place of the dead `pid`."""
    return {PREDECESSOR_PID: str(pid), PREDECESSOR_DIED_BY: repr(died_by)}


def retry_predecessor_jobs(connection: redis.Redis, env: Mapping[str, str] = os.environ) -> int:
    """Make the runs of this process's dead predecessor (named in `env`) abandoned now;
    how many. Nothing without a predecessor, or if it has no record left."""
    try:
        pid, died_by = int(env[PREDECESSOR_PID]), float(env[PREDECESSOR_DIED_BY])
    except (KeyError, ValueError):
        return 0
    host = socket.gethostname()
    retried = 0
    for worker in Worker.all(connection=connection, serializer=JSONSerializer):
        if worker.hostname != host or worker.pid != pid or not _born_before(worker, died_by):
            continue
        for execution in worker.get_current_executions():
            try:
                job = Job.fetch(execution.job_id, connection=connection, serializer=JSONSerializer)
            except NoSuchJobError:
                continue
            registry = StartedJobRegistry(
                job.origin, connection=connection, serializer=JSONSerializer
            )
            # Due now: the maintenance this worker runs as it starts (RQ's, which any
            # live worker runs) retries it. A run that has ended is not added back
            if connection.zadd(registry.key, {execution.composite_key: 0}, xx=True, ch=True):
                retried += 1
                log.warning(
                    "job %s: its worker (pid %d) died while running it; abandoned now",
                    job.id,
                    pid,
                )
        worker.register_death()
    return retried


def _born_before(worker: Worker, moment: float) -> bool:
    born = worker.birth_date
    if born is None:
        return False
    if born.tzinfo is None:  # RQ writes UTC
        born = born.replace(tzinfo=UTC)
    return born.timestamp() < moment
