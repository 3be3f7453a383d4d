"""Maintenance on demand: a sleep consolidation or an archive pass now, followed to its
report; the archive's segments."""

from __future__ import annotations

import functools
from typing import Any

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import client_of, common, emit, remember
from assocmem.api.cli.follow import follow

WAIT = click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Follow the job to its report, with a progress bar.",
)


@click.command(epilog="Example: assocmem consolidate --now --dry-run")
@click.option("--now", is_flag=True, help="Run a consolidation now (it also runs nightly).")
@click.option("--dry-run", is_flag=True, help="Decide and report; append nothing.")
@WAIT
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


@click.command(epilog="Example: assocmem archive --now")
@click.option("--now", is_flag=True, help="Run an archive pass now (it also runs nightly).")
@WAIT
@common
@click.pass_context
def archive(ctx: click.Context, now: bool, wait: bool, url: str | None, as_json: bool) -> None:
    """The log's archive: entries older than ASSOCMEM_RETENTION_DAYS (default 30) that a
    snapshot already holds move to immutable compressed segments, recorded in a manifest,
    and only then leave the stream. Replay, --as-of and audits read them as before. Lists the
    segments; --now runs a pass (the cron of `assocmem up` runs one every night)."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        if not now:
            emit(ctx, client.segments(), render.archive_manifest)
            return
        job = client.archive()
        if not wait:
            emit(ctx, job, lambda j: f"queued archive job {j['id']}: assocmem jobs shows it")
            return
        job = follow(client, job, "archiving", as_json)
    emit(ctx, job, render.archive_report)


@click.command(epilog="Example: assocmem expire")
@WAIT
@common
@click.pass_context
def expire(ctx: click.Context, wait: bool, url: str | None, as_json: bool) -> None:
    """Erase the memories past their expiry (`write --expires-in`) for real now, as forget
    erases: the log, its archive, the snapshots and Redis's files are rewritten without them.
    Reads leave a memory out from the moment it expires; the cron of `assocmem up` runs this
    pass every night. Needs an admin key."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        job = client.expire()
        if not wait:
            emit(ctx, job, lambda j: f"queued expiry job {j['id']}: assocmem jobs shows it")
            return
        job = follow(client, job, "expiring", as_json)
    emit(ctx, job, _expired)


def _expired(job: dict[str, Any]) -> str:
    gone = job["result"]["expired"]
    if not gone:
        return "no memory had expired"
    return f"erased {len(gone)} expired memories: {', '.join(gone[:10])}" + (
        " ..." if len(gone) > 10 else ""
    )


@click.command(
    epilog="Example: assocmem forget --user alice@example.com --yes",
)
@click.option("--user", help="Erase every event about this user.")
@click.option("--agent", help="Erase every event this agent appended.")
@click.option("--session", help="Erase every event of this session.")
@click.option("--namespace", help="Erase every event of this namespace.")
@click.option("--tenant", help="Erase the whole tenant (your key's: give its name to confirm).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@WAIT
@functools.partial(common, scoped=False)
@click.pass_context
def forget(
    ctx: click.Context,
    user: str | None,
    agent: str | None,
    session: str | None,
    namespace: str | None,
    tenant: str | None,
    yes: bool,
    wait: bool,
    url: str | None,
    as_json: bool,
) -> None:
    """Erase a subject's events for real: the log, its archive, every snapshot and Redis's
    files are rewritten without them (other events keep their positions; events appended
    meanwhile are kept), and a report says how many events, memories, links and how much
    learned weight went. A subject.forgotten event records the request, naming the subject
    only by its SHA-256. Needs an admin key; cannot be undone."""
    remember(ctx, url, as_json)
    named = {
        k: v
        for k, v in dict(
            user=user, agent=agent, session=session, namespace=namespace, tenant=tenant
        ).items()
        if v
    }
    if len(named) != 1:
        raise click.UsageError(
            "name exactly one of --user, --agent, --session, --namespace, --tenant"
        )
    [(kind, value)] = named.items()
    if not yes:
        click.confirm(f"Erase every event of {kind} {value!r}? This cannot be undone", abort=True)
    with client_of(ctx) as client:
        job = client.forget(kind, value)
        if not wait:
            emit(ctx, job, lambda j: f"queued erasure job {j['id']}: assocmem jobs shows it")
            return
        job = follow(client, job, "erasing", as_json)
    emit(ctx, job, render.erasure)
