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


_AFTER = click.option(
    "--after",
    help="Answer from a state that includes this position (one a write printed), e.g. a write"
    " made through another API replica.",
)


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
@click.option(
    "--concepts",
    help="Comma-separated concepts; extracted from TEXT when absent. A one-word name takes"
    " the form extraction gives it (Timeouts -> timeout), so it meets the word in text.",
)
@click.option(
    "--importance", type=int, default=3, show_default=True, help="1 (trivial) to 5 (vital)."
)
@click.option("--supersedes", help="Comma-separated ids this memory replaces.")
@click.option("--key", help="Idempotency key: a retried write with the same key is stored once.")
@_common
@click.pass_context
def write(
    ctx: click.Context,
    text: str,
    concepts: str | None,
    importance: int,
    supersedes: str | None,
    key: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Write one memory; prints its id (its stream position) and its concepts."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.write(
            text, _split(concepts), importance, key=key, supersedes=_split(supersedes)
        )
        _emit(ctx, response, render.written)


@main.command(
    epilog="Example: assocmem read 'why do requests time out' --depth deep\n\n"
    "Example: assocmem read 'what did I deploy last week' --budget 300"
)
@click.argument("text", required=False)
@click.option("--concepts", help="Comma-separated query concepts (else extracted from TEXT).")
@click.option(
    "--depth",
    type=click.Choice(["fast", "standard", "deep"]),
    help="fast: direct + fuzzy; standard: + one link step; deep: + multi-hop chains "
    "[default: standard].",
)
@click.option("--floor", type=float, help="Count a written link needs to be followed [default: 2].")
@click.option("--limit", type=int, help="Items returned [default: 10].")
@click.option(
    "--time", "when", help="Only memories in this time: 'last week', '上个月', 'since March'."
)
@click.option(
    "--no-auto-time", is_flag=True, help="Do not turn a time expression in TEXT into a range."
)
@click.option("--tz", help="IANA time zone of time expressions [default: ASSOCMEM_TZ or UTC].")
@click.option("--history", is_flag=True, help="Also show memories a newer one superseded.")
@click.option(
    "--budget", type=int, help="Also print the result as prompt text of at most this many tokens."
)
@click.option("--now", type=float, help="Rank as if at this unix time (reproducible scores).")
@click.option("--no-record", is_flag=True, help="Do not count the results as accessed.")
@_AFTER
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
    depth: str | None,
    floor: float | None,
    limit: int | None,
    when: str | None,
    no_auto_time: bool,
    tz: str | None,
    history: bool,
    budget: int | None,
    now: float | None,
    no_record: bool,
    after: str | None,
    as_of: str | None,
    without_feedback: bool,
    url: str | None,
    as_json: bool,
) -> None:
    """Recall memories: direct and fuzzy hits, then memories reached through links, each with its path."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.read(
            text,
            _split(concepts),
            depth=depth,
            floor=floor,
            limit=limit,
            time=when,
            auto_time=False if no_auto_time else None,
            tz=tz,
            history=history or None,
            token_budget=budget,
            now=now,
            record_access=False if no_record else None,
            after=after,
            as_of=as_of,
            without_feedback=without_feedback or None,
        )
        _emit(ctx, response, render.recalled)


@main.command(epilog="Example: assocmem chain timeout jitter")
@click.argument("concepts", nargs=-1, required=True)
@click.option("--floor", type=float, help="Count a written link needs to be followed [default: 2].")
@_AFTER
@_common
@click.pass_context
def chain(
    ctx: click.Context,
    concepts: tuple[str, ...],
    floor: float | None,
    after: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Find the chains of links between CONCEPTS (2 to 8), with the hidden concepts between them."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        _emit(ctx, client.find_chain(list(concepts), floor=floor, after=after), render.chains)


@main.command(epilog="Example: assocmem importance 1700000000000-0 5")
@click.argument("memory_id")
@click.argument("importance", type=int)
@_common
@click.pass_context
def importance(
    ctx: click.Context, memory_id: str, importance: int, url: str | None, as_json: bool
) -> None:
    """Set a memory's importance, 1 (trivial) to 5 (vital): it scales rank and slows decay."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.set_importance(memory_id, importance)
        _emit(
            ctx,
            response,
            lambda r: f"importance of {r['id']} is {r['importance']} at {r['position']}",
        )


@main.command(
    "log",
    epilog="Example: assocmem log 'deployed v2.3 to staging' --category deploy --tags release,staging",
)
@click.argument("text")
@click.option("--category", default="general", show_default=True, help="Label to filter by.")
@click.option("--tags", help="Comma-separated tags.")
@click.option("--source", help="Who or what logged it.")
@click.option("--importance", type=int, default=3, show_default=True, help="1 to 5.")
@click.option("--ts", type=float, help="When it happened, unix seconds [default: now].")
@_common
@click.pass_context
def log_activity(
    ctx: click.Context,
    text: str,
    category: str,
    tags: str | None,
    source: str | None,
    importance: int,
    ts: float | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Log an activity (episodic memory): recall it by day, range, category or keyword."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.log_activity(
            text,
            category=category,
            tags=_split(tags) or [],
            source=source,
            importance=importance,
            ts=ts,
        )
        _emit(ctx, response, render.written)


@main.command(
    epilog="Example: assocmem activities --when yesterday\n\n"
    "Example: assocmem activities --date 2026-11-28 --category deploy"
)
@click.option("--date", "day", help="One day, YYYY-MM-DD.")
@click.option("--when", help="A time expression: 'last week', '上周', 'since March'.")
@click.option("--category")
@click.option("--keyword", help="A concept or piece of text the entry must contain.")
@click.option("--source")
@click.option("--limit", type=int, help="Entries shown [default: 100].")
@click.option("--tz", help="IANA time zone [default: ASSOCMEM_TZ or UTC].")
@_common
@click.pass_context
def activities(
    ctx: click.Context,
    day: str | None,
    when: str | None,
    category: str | None,
    keyword: str | None,
    source: str | None,
    limit: int | None,
    tz: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """List activity entries of a day or range (default: the last 7 days), newest first."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.activities(
            date=day,
            when=when,
            category=category,
            keyword=keyword,
            source=source,
            limit=limit,
            tz=tz,
        )
        _emit(ctx, response, render.activity_list)


@main.command(epilog="Example: assocmem summary --period week --when 'last month'")
@click.option(
    "--period", type=click.Choice(["day", "week", "month"]), default="day", show_default=True
)
@click.option("--when", help="A time expression [default: the last 7 days].")
@click.option("--category")
@click.option("--tz", help="IANA time zone [default: ASSOCMEM_TZ or UTC].")
@_common
@click.pass_context
def summary(
    ctx: click.Context,
    period: str,
    when: str | None,
    category: str | None,
    tz: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Summarise the activity log per day, week or month: counts, categories, top concepts."""
    _remember(ctx, url, as_json)
    with _client(ctx) as client:
        response = client.activity_summary(period, when=when, category=category, tz=tz)
        _emit(ctx, response, render.activity_summary)


@main.command(
    epilog="Example: assocmem ingest notes/*.md\n\n"
    "Example: assocmem ingest tickets.csv --column body --scope window"
)
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--scope",
    type=click.Choice(["sentence", "window"]),
    default="sentence",
    show_default=True,
    help="Link concepts within a sentence, or within a 40-word window.",
)
@click.option("--column", default="text", show_default=True, help="CSV column holding the text.")
@_common
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    scope: str,
    column: str,
    url: str | None,
    as_json: bool,
) -> None:
    """Feed text files and CSV files into the links (documents are not recalled as memories).

    Files are sent in pieces of about 90,000 characters, each stored once (a re-run of
    the same files adds nothing); a progress bar shows the bytes sent.
    """
    from .ingest import pieces

    _remember(ctx, url, as_json)
    total = sum(p.stat().st_size for p in paths)
    results = []
    with (
        _client(ctx) as client,
        click.progressbar(length=total, label="ingesting", file=sys.stderr, show_pos=True) as bar,
    ):
        for piece in pieces(paths, column):
            response = client.ingest(
                piece.title, piece.text, scope, source=str(piece.path), key=piece.key
            )
            results.append(response)
            bar.update(piece.size)
    summary_ = {
        "files": len(paths),
        "pieces": len(results),
        "units": sum(r["units"] for r in results),
        "already_stored": sum(1 for r in results if r["duplicate"]),
    }
    _emit(ctx, summary_, render.ingested)


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
