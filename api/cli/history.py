"""The log's history: how a link got its weight, what happened to a memory, a replay checked
against the snapshots, what changed between two points, the dead letters."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import client_of, common, emit, remember
from assocmem.api.cli.follow import follow


@click.group(epilog="Example: assocmem audit link timeout jitter --plot link.png")
def audit() -> None:
    """Audit what agents learned: the events behind a link or a memory."""


@audit.command(
    "link", epilog="Example: assocmem audit link timeout jitter --plot timeout-jitter.svg"
)
@click.argument("source")
@click.argument("target")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also draw the weight over time, written and taught stacked (.png or .svg).",
)
@common
@click.pass_context
def audit_link(
    ctx: click.Context,
    source: str,
    target: str,
    plot: Path | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Every event that changed the link SOURCE -- TARGET: position, time, agent, event type,
    written and taught deltas, and the weight after it. Runs as a job on a worker (it may
    read the whole log), with a progress bar. A concept no event ever named is refused
    (exit status 1) with the known concepts nearest to it."""
    remember(ctx, url, as_json)
    if plot is not None and plot.suffix.lower() not in (".png", ".svg"):
        raise click.BadParameter(f"{plot} ends in {plot.suffix!r}: expected .png or .svg")
    with client_of(ctx) as client:
        job = client.start_audit_link(source, target)
        response = follow(client, job, "auditing", as_json)["result"]
    if plot is not None:
        from assocmem.api.cli.plot import plot_link

        plot_link(response, plot)
    emit(ctx, response, render.link_audit)
    if plot is not None:
        click.echo(f"wrote the plot of the link's weight to {plot.resolve()}", err=as_json)


@audit.command("memory", epilog="Example: assocmem audit memory 1700000000000-0")
@click.argument("memory_id")
@common
@click.pass_context
def audit_memory(ctx: click.Context, memory_id: str, url: str | None, as_json: bool) -> None:
    """A memory's write, the reads that returned it, its ratings, importance and supersession."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.audit_memory(memory_id), render.memory_audit)


@click.command(epilog="Example: assocmem replay --until 2026-11-30T12:00:00Z --verify")
@click.option("--until", help="A stream position or an ISO time [default: the log's end].")
@click.option(
    "--verify",
    is_flag=True,
    help="Exit 1 when the fold from zero differs from the served state (without it, the"
    " comparison is printed and the exit is 0).",
)
@common
@click.pass_context
def replay(
    ctx: click.Context, until: str | None, verify: bool, url: str | None, as_json: bool
) -> None:
    """Fold the log from zero and compare the content hash with the state served at that
    position (the newest snapshot at or before it, plus the events after). Runs as a job on
    a worker, with a progress bar."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        job = client.start_replay(until)
        response = follow(client, job, "replaying", as_json)["result"]
    emit(ctx, response, render.verification)
    if verify and not response["matches"]:
        sys.exit(1)


@click.command(
    epilog="Example: assocmem diff 1700000000000-0 2026-11-30T12:00:00Z --limit 20\n\n"
    "Example: assocmem diff yesterday today"
)
@click.argument("first")
@click.argument("second")
@click.option(
    "--limit",
    type=int,
    help="Of each kind of change, list the biggest this many, 1 to 100,000 (all are"
    " counted) [default: 100].",
)
@common
@click.pass_context
def diff(
    ctx: click.Context,
    first: str,
    second: str,
    limit: int | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Links that appeared, vanished or changed weight between two points (positions, ISO
    times, or time expressions, each the end of the time it names: `yesterday today` is
    what changed today), written and taught apart: biggest change of weight first, and how
    many of each."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.diff(first, second, limit), render.difference)


@click.command("dead-letters", epilog="Example: assocmem dead-letters --resend")
@click.option(
    "--resend",
    is_flag=True,
    help="Append again the entries this version reads (each once), after a fix.",
)
@click.option(
    "--limit",
    type=int,
    help="List the oldest this many, 1 to 100,000 (all are counted) [default: 100].",
)
@common
@click.pass_context
def dead_letters(
    ctx: click.Context, resend: bool, limit: int | None, url: str | None, as_json: bool
) -> None:
    """Entries the fold could not apply, oldest first: position, reason and the entry as
    stored, and how many there are."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        if resend:
            emit(ctx, client.resend_dead_letters(), render.resent)
        else:
            emit(ctx, client.dead_letters(limit), render.dead_letters)


@click.command(epilog="Example: assocmem jobs --requeue fold-default")
@click.option("--requeue", "job_id", help="Queue this failed job again.")
@common
@click.pass_context
def jobs(ctx: click.Context, job_id: str | None, url: str | None, as_json: bool) -> None:
    """The pipeline's jobs: queued, running, waiting for a retry, and failed with their error."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        if job_id:
            emit(ctx, client.requeue_job(job_id), lambda j: render.jobs({"jobs": [j]}))
        else:
            emit(ctx, client.jobs(), render.jobs)
