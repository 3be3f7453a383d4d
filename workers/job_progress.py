"""Progress of the running RQ job, kept in its metadata (`assocmem jobs`, the API's
/v1/jobs/{id} and rq-dashboard show it): a phase and the share of it done, 0 to 1."""

from __future__ import annotations

import time
from collections.abc import Callable

from rq import get_current_job

SAVE_EVERY = 0.5
"""Seconds between two writes of the metadata (the end of a phase is always written)."""

Report = Callable[[str, float], None]
Share = Callable[[float], None]
"""Told how far a long query has got, 0 to 1."""


def job_progress() -> Report:
    """A reporter for the current job (one that does nothing outside a job)."""
    job = get_current_job()
    last = [0.0]

    def report(phase: str, done: float) -> None:
        if job is None or (time.monotonic() - last[0] < SAVE_EVERY and done < 1.0):
            return
        last[0] = time.monotonic()
        job.meta["progress"] = {"phase": phase, "done": round(done, 3)}
        job.save_meta()

    return report
