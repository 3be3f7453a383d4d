"""Following a job the API queued (a consolidation, a replay, an audit) to its end, with a
progress bar on a terminal."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from assocmem.api.client.sync import Client

POLL_SECONDS = 0.5
PHASES = {"loading": (0, 30), "deciding": (30, 100)}
"""The share of the bar a phase fills (from, to); any other phase fills all of it."""


def follow(client: Client, job: dict[str, Any], label: str, as_json: bool) -> dict[str, Any]:
    """Poll the job until it has finished or failed; the job as it ended.

    A failed job is a ClickException naming its error. The bar goes to stderr and only on a
    terminal, so --json output and pipes stay clean. Ctrl-C stops following, not the job."""
    try:
        return _followed(client, job, label, as_json)
    except KeyboardInterrupt:
        click.echo(
            f"\nstopped following job {job['id']}; it goes on on a worker"
            " (`assocmem jobs` lists it while it runs)",
            err=True,
        )
        sys.exit(130)


def _followed(client: Client, job: dict[str, Any], label: str, as_json: bool) -> dict[str, Any]:
    hidden = as_json or not sys.stderr.isatty()
    with click.progressbar(length=100, label=label, file=sys.stderr, hidden=hidden) as bar:
        shown = 0
        while job["state"] not in ("finished", "failed"):
            time.sleep(POLL_SECONDS)
            job = client.job(job["id"])
            progress = job.get("progress") or {}
            start, end = PHASES.get(progress.get("phase", ""), (0, 100))
            at = int(start + (end - start) * float(progress.get("done", 0)))
            if at > shown:
                bar.update(at - shown)
                shown = at
        if job["state"] == "finished":
            bar.update(100 - shown)
    if job["state"] == "failed":
        raise click.ClickException(f"job {job['id']} failed: {job['error']}")
    return job
