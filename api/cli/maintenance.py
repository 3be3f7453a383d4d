"""Maintenance on demand: a sleep consolidation now, followed to its report."""

from __future__ import annotations

import click

from .. import render
from .common import client_of, common, emit, remember
from .follow import follow


@click.command(epilog="Example: assocmem consolidate --now --dry-run")
@click.option("--now", is_flag=True, help="Run a consolidation now (it also runs nightly).")
@click.option("--dry-run", is_flag=True, help="Decide and report; append nothing.")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Follow the job to its report, with a progress bar.",
)
@common
@click.pass_context
def consolidate(
    ctx: click.Context, now: bool, dry_run: bool, wait: bool, url: str | None, as_json: bool
) -> None:
    """Sleep consolidation: weigh old written links down by age, fade taught links (slower),
    take the links off rare concepts and merge duplicate notes, as one links.consolidated
    event that replay and `audit link` show. The cron of `assocmem up` runs it every night at
    ASSOCMEM_CONSOLIDATE_AT (default 02:30, in ASSOCMEM_TZ); --now runs it on demand, on a
    worker. The rule's settings are the pipeline's environment (README, "Consolidation")."""
    remember(ctx, url, as_json)
    if not now:
        raise click.UsageError(
            "consolidation runs nightly by itself; pass --now to run it now "
            "(--dry-run to see the report without changing anything)"
        )
    with client_of(ctx) as client:
        job = client.consolidate(dry_run=dry_run)
        if not wait:
            emit(ctx, job, lambda j: f"queued consolidation job {j['id']}: assocmem jobs shows it")
            return
        job = follow(client, job, "consolidating", as_json)
    emit(ctx, job, render.consolidation)
