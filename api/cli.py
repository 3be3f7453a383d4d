"""The `assocmem` command line: run the pipeline, write, read, teach and inspect memories."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import orjson

from assocmem.workers.errors import StoreError
from assocmem.workers.settings import load_settings

from . import render
from .client import Client
from .errors import ApiError
from .run_file import service_url


def _split(value: str | None) -> list[str] | None:
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


def _client(ctx: click.Context) -> Client:
    home = Path(os.environ.get("ASSOCMEM_HOME", ".assocmem"))
    return Client(service_url(ctx.obj.get("url"), home))


def _emit(ctx: click.Context, response: Any, human: Callable[[Any], str]) -> None:
    if ctx.obj.get("json"):
        click.echo(orjson.dumps(response, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(human(response))


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ApiError, StoreError) as exc:
            raise click.ClickException(str(exc)) from exc


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--json", "as_json", is_flag=True, help="Print the API's JSON response.")(
        func
    )
    func = click.option(
        "--url",
        envvar="ASSOCMEM_URL",
        help="Service URL [env ASSOCMEM_URL; default: the local `up`'s].",
    )(func)
    return func


def _remember(ctx: click.Context, url: str | None, as_json: bool) -> None:
    ctx.ensure_object(dict)
    ctx.obj.update(url=url, json=as_json)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="assocmem")
def main() -> None:
    """Long-term associative memory for AI agents.

    Start the pipeline with `assocmem up`, then write, read and teach it from
    another terminal. Every command has --help with an example.
    """


@main.command(epilog="Example: assocmem up --data ./.assocmem --port 8765")
@click.option(
    "--data",
    "home",
    type=click.Path(path_type=Path),
    envvar="ASSOCMEM_HOME",
    default=".assocmem",
    show_default=True,
    help="Data directory (embedded Redis, logs) [env ASSOCMEM_HOME].",
)
@click.option(
    "--port",
    type=int,
    envvar="ASSOCMEM_PORT",
    default=8765,
    show_default=True,
    help="HTTP port; 0 picks a free one.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="RQ worker processes.",
)
@click.option(
    "--appendfsync",
    type=click.Choice(["everysec", "always"]),
    default=None,
    help="Embedded Redis AOF fsync policy [default: everysec].",
)
def up(home: Path, port: int, workers: int, appendfsync: str | None) -> None:
    """Run the whole pipeline: Redis (embedded unless REDIS_URL is set), API and workers.

    Prints the URL it serves when ready; Ctrl-C stops everything. A later `up`
    on the same --data finds the same memories and the same taught links.
    """
    from .supervisor import run_pipeline

    settings = load_settings(os.environ, home=home, port=port, appendfsync=appendfsync)
    run_pipeline(
        settings, workers, echo=lambda line: click.echo(line, err=False) or sys.stdout.flush()
    )


@main.command(epilog="Example: REDIS_URL=redis://127.0.0.1:6379/0 assocmem worker")
@click.option("--burst", is_flag=True, help="Run the queued jobs, then exit.")
def worker(burst: bool) -> None:
    """Run one RQ worker (fold jobs) and the fold scheduler. Needs REDIS_URL."""
    from assocmem.workers.runtime import Runtime
    from assocmem.workers.worker import run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    run_worker(Runtime.connect(load_settings(os.environ)), burst=burst)


@main.command(epilog="Example: REDIS_URL=redis://127.0.0.1:6379/0 assocmem serve --port 8765")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, envvar="ASSOCMEM_PORT", default=8765, show_default=True)
def serve(host: str, port: int) -> None:
    """Run the HTTP API alone (OpenAPI docs at /docs). Needs REDIS_URL."""
    import uvicorn

    from .app import create_app

    settings = load_settings(os.environ, host=host, port=port)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", access_log=False)


@main.command(
    epilog="Example: assocmem write 'retry with backoff after a timeout' --concepts timeout,backoff"
)
@click.argument("text")
@click.option("--concepts", help="Comma-separated concepts; extracted from TEXT when absent.")
@click.option(
    "--importance", type=int, default=3, show_default=True, help="1 (trivial) to 5 (vital)."
)
@click.option("--key", help="Idempotency key: a retried write with the same key is stored once.")
@_common
@click.pass_context
def write(
    ctx: click.Context,
    text: str,
    concepts: str | None,
    importance: int,
    key: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Write one memory; prints its id (its stream position)."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        _emit(ctx, client.write(text, _split(concepts), importance, key=key), render.written)


@main.command(
    epilog="Example: assocmem read --concepts timeout --floor 2   |   assocmem read 'why do requests time out'"
)
@click.argument("text", required=False)
@click.option("--concepts", help="Comma-separated query concepts (else extracted from TEXT).")
@click.option(
    "--floor", type=float, help="Weight a written link needs to be followed [default: 2]."
)
@click.option("--limit", type=int, help="Items returned [default: 10].")
@click.option("--as-of", help="Read the state folded up to this stream position.")
@click.option(
    "--without-feedback", is_flag=True, help="Read a state folded with all feedback left out."
)
@_common
@click.pass_context
def read(
    ctx: click.Context,
    text: str | None,
    concepts: str | None,
    floor: float | None,
    limit: int | None,
    as_of: str | None,
    without_feedback: bool,
    url: str | None,
    as_json: bool,
) -> None:
    """Recall memories: direct hits, then memories reached through links, each with its path."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.read(text, _split(concepts), floor, limit, as_of, without_feedback)
        _emit(ctx, response, render.recalled)


@main.command(
    epilog="Example: assocmem feedback --ids 1700000000000-0 --outcome 1 --concepts timeout"
)
@click.option("--ids", required=True, help="Comma-separated ids of the memories the answer used.")
@click.option("--outcome", type=float, required=True, help="-1 (harmful) to 1 (fully helpful).")
@click.option("--concepts", help="Comma-separated concepts of the query.")
@click.option("--text", help="The query text, when --concepts is not given.")
@click.option("--key", help="Idempotency key.")
@_common
@click.pass_context
def feedback(
    ctx: click.Context,
    ids: str,
    outcome: float,
    concepts: str | None,
    text: str | None,
    key: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Teach links: helpful feedback strengthens query-to-memory links, unhelpful weakens them."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        _emit(
            ctx,
            client.feedback(_split(ids) or [], outcome, _split(concepts), text, key),
            render.fed_back,
        )


@main.command(epilog="Example: assocmem graph timeout backoff --depth 2")
@click.argument("concepts", nargs=-1, required=True)
@click.option(
    "--depth", type=int, default=1, show_default=True, help="Steps from the seeds, 1 to 3."
)
@_common
@click.pass_context
def graph(
    ctx: click.Context, concepts: tuple[str, ...], depth: int, url: str | None, as_json: bool
) -> None:
    """Show the links around CONCEPTS: weight, written count, learned delta, last change."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        _emit(ctx, client.graph(list(concepts), depth), render.edges)


@main.command(epilog="Example: assocmem state --as-of 1700000000000-0")
@click.option("--as-of", help="Rebuild the state folded up to this position.")
@click.option("--without-feedback", is_flag=True, help="Rebuild with all feedback left out.")
@_common
@click.pass_context
def state(
    ctx: click.Context, as_of: str | None, without_feedback: bool, url: str | None, as_json: bool
) -> None:
    """Position, content hash and size of the served state (or a rebuilt one)."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        _emit(ctx, client.state(as_of, without_feedback), render.state)


if __name__ == "__main__":
    main()
