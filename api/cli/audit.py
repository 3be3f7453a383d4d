"""Auditing what agents learned: the links around concepts, and the state's identity."""

from __future__ import annotations

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import client_of, common, emit, remember


@click.command(epilog="Example: assocmem graph timeout backoff --hops 2")
@click.argument("concepts", nargs=-1, required=True)
@click.option(
    "--hops", type=int, default=1, show_default=True, help="Links followed from the seeds, 1 to 3."
)
@common
@click.pass_context
def graph(
    ctx: click.Context, concepts: tuple[str, ...], hops: int, url: str | None, as_json: bool
) -> None:
    """Show the links around CONCEPTS: weight, written count, learned delta, last change."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.graph(list(concepts), hops), render.edges)


@click.command(epilog="Example: assocmem state --as-of 1700000000000-0")
@click.option("--as-of", help="Rebuild the state folded up to this position.")
@click.option("--without-feedback", is_flag=True, help="Rebuild with all feedback left out.")
@common
@click.pass_context
def state(
    ctx: click.Context, as_of: str | None, without_feedback: bool, url: str | None, as_json: bool
) -> None:
    """Position, content hash and size of the served state (or a rebuilt one)."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.state(as_of, without_feedback), render.state)
