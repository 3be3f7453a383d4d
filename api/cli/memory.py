"""Memories: write, read, chain, rate and weigh them; get, list and update them by id."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import AFTER, client_of, common, emit, remember, split
from assocmem.api.cli.follow import follow

F = TypeVar("F", bound=Callable[..., Any])


def _metadata_option(said: str) -> Callable[[F], F]:
    """--metadata KEY=VALUE, repeatable (`_metadata` reads it)."""
    return click.option("--metadata", multiple=True, metavar="KEY=VALUE", help=said)


FILTER = click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only memories whose metadata key (or field: agent, kind, user, session, namespace,"
    " ts, importance) holds this; repeatable, all must hold. Also KEY!=V, KEY>=N, KEY<=N,"
    " KEY>N, KEY<N.",
)
_CONDITION = re.compile(r"^(?P<key>[^=<>!]+?)(?P<op>>=|<=|!=|=|>|<)(?P<value>.*)$")
_OPERATORS = {"=": "eq", "!=": "ne", ">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}


def _filters(conditions: tuple[str, ...]) -> dict[str, Any] | None:
    """--filter options as a read's filters: every condition must hold."""
    found: dict[str, dict[str, Any]] = {}
    for condition in conditions:
        match = _CONDITION.match(condition)
        if match is None:
            raise click.BadParameter(
                f"{condition!r} is not KEY=VALUE (or !=, >=, <=, >, <)", param_hint="--filter"
            )
        key, op = match["key"].strip(), _OPERATORS[match["op"]]
        found.setdefault(key, {})[op] = _scalar(match["value"])
    return found or None


def _scalar(text: str) -> Any:
    """A value that reads as a JSON scalar (7, 2.5, true) is that value, else the text."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, str | int | float | bool) else text


@click.command(
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
@_metadata_option("Metadata, repeatable; a value that reads as JSON (7, 2.5, true) is that value.")
@click.option(
    "--expires-in",
    metavar="DURATION",
    help="Forget it after this long: 90s, 30m, 12h, 7d, 2w. Reads leave it out from then on;"
    " the nightly expiry pass erases it for real.",
)
@click.option("--key", help="Idempotency key: a retried write with the same key is stored once.")
@common
@click.pass_context
def write(
    ctx: click.Context,
    text: str,
    concepts: str | None,
    importance: int,
    supersedes: str | None,
    metadata: tuple[str, ...],
    expires_in: str | None,
    key: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Write one memory; prints its id (its stream position) and its concepts."""
    remember(ctx, url, as_json)
    expires_at = time.time() + _seconds(expires_in) if expires_in else None
    with client_of(ctx) as client:
        response = client.write(
            text,
            split(concepts),
            importance,
            key=key,
            supersedes=split(supersedes),
            metadata=_metadata(metadata),
            expires_at=expires_at,
        )
        emit(ctx, response, render.written)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def _seconds(duration: str) -> float:
    """'7d' -> 604800.0: a number and one unit (s, m, h, d, w)."""
    match = _DURATION.match(duration)
    if match is None or float(match[1]) <= 0:
        raise click.BadParameter(
            f"{duration!r} is not a duration: expected a number and a unit, as 90s, 30m, 12h,"
            " 7d or 2w",
            param_hint="--expires-in",
        )
    return float(match[1]) * _UNIT[match[2]]


@click.command(
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
    "--no-context",
    is_flag=True,
    help="Leave out the memories written just after or before a strong match (`context`).",
)
@click.option(
    "--budget", type=int, help="Also print the result as prompt text of at most this many tokens."
)
@click.option("--now", type=float, help="Rank as if at this unix time (reproducible scores).")
@click.option("--no-record", is_flag=True, help="Do not count the results as accessed.")
@AFTER
@click.option("--as-of", help="Read the state folded up to this stream position.")
@click.option(
    "--without-feedback", is_flag=True, help="Read a state folded with all feedback left out."
)
@FILTER
@common
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
    no_context: bool,
    budget: int | None,
    now: float | None,
    no_record: bool,
    after: str | None,
    as_of: str | None,
    without_feedback: bool,
    filters: tuple[str, ...],
    url: str | None,
    as_json: bool,
) -> None:
    """Recall memories: direct and fuzzy hits, then memories reached through links, each with
    its path, and those written beside the strongest matches (`context`)."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        response = client.read(
            text,
            split(concepts),
            depth=depth,
            floor=floor,
            limit=limit,
            time=when,
            auto_time=False if no_auto_time else None,
            tz=tz,
            history=history or None,
            context=False if no_context else None,
            token_budget=budget,
            now=now,
            record_access=False if no_record else None,
            after=after,
            as_of=as_of,
            without_feedback=without_feedback or None,
            filters=_filters(filters),
        )
        emit(ctx, response, render.recalled)


@click.command(epilog="Example: assocmem chain timeout jitter")
@click.argument("concepts", nargs=-1, required=True)
@click.option("--floor", type=float, help="Count a written link needs to be followed [default: 2].")
@AFTER
@common
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
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.find_chain(list(concepts), floor=floor, after=after), render.chains)


@click.command(epilog="Example: assocmem get 1700000000000-0")
@click.argument("memory_id")
@common
@click.pass_context
def get(ctx: click.Context, memory_id: str, url: str | None, as_json: bool) -> None:
    """Show one memory by its id: text, concepts, scope, importance, accesses."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(ctx, client.get_memory(memory_id), _shown)


@click.command(epilog='Example: assocmem update 1700000000000-0 "retry with jitter, not backoff"')
@click.argument("memory_id")
@click.argument("text")
@click.option("--concepts", help="Comma-separated concepts (default: extracted from the text).")
@click.option("--importance", type=click.IntRange(1, 5), default=3, show_default=True)
@common
@click.pass_context
def update(
    ctx: click.Context,
    memory_id: str,
    text: str,
    concepts: str | None,
    importance: int,
    url: str | None,
    as_json: bool,
) -> None:
    """Write a new version of a memory: it supersedes the old one, which reads no longer
    return and its history keeps."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        written = client.update_memory(memory_id, text, split(concepts), importance)
        emit(ctx, written, lambda w: f"{w['id']} supersedes {memory_id}")


@click.command(epilog="Example: assocmem delete 1700000000000-0")
@click.argument("memory_id")
@click.option(
    "--erase",
    is_flag=True,
    help="Also take its write out of the log for real, as forget does (an admin key's);"
    " waits for the erasure job, with a progress bar.",
)
@common
@click.pass_context
def delete(ctx: click.Context, memory_id: str, erase: bool, url: str | None, as_json: bool) -> None:
    """Delete a memory: no read, listing or get returns it again, and the links it wrote are
    taken off. Its text stays in the log (audit shows the deletion) unless --erase."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        deleted = client.delete_memory(memory_id, erase)
        if deleted["erasure"] is not None:
            deleted["erasure"] = follow(client, deleted["erasure"], "erasing", as_json)
        emit(ctx, deleted, _deleted)


def _deleted(deleted: dict[str, Any]) -> str:
    said = (
        f"{deleted['id']} deleted at {deleted['position']}"
        if deleted["position"]
        else f"{deleted['id']} was deleted before"
    )
    if deleted["erasure"] is not None:
        said += f"; its write erased from the log ({deleted['erasure']['state']})"
    return said


@click.command("list", epilog="Example: assocmem list --agent planner --limit 20")
@click.option("--agent", help="Only memories this agent wrote.")
@click.option("--kind", type=click.Choice(["memory", "activity"]), help="Only this kind.")
@click.option("--superseded", is_flag=True, help="List superseded versions too.")
@_metadata_option("Only memories whose metadata holds this, repeatable.")
@FILTER
@click.option("--cursor", help="Go on from the page that printed this cursor.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@common
@click.pass_context
def list_(
    ctx: click.Context,
    agent: str | None,
    kind: str | None,
    superseded: bool,
    metadata: tuple[str, ...],
    filters: tuple[str, ...],
    cursor: str | None,
    limit: int,
    url: str | None,
    as_json: bool,
) -> None:
    """List the memories this key sees (narrowed by --user, --session, --namespace), newest
    first, a page at a time."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        page = client.list_memories(
            agent=agent,
            kind=kind,
            superseded=superseded,
            metadata=_metadata(metadata),
            cursor=cursor,
            limit=limit,
            filters=_filters(filters),
        )
        emit(ctx, page, _listed)


def _listed(page: dict[str, Any]) -> str:
    lines = [
        f"{m['id']}  {render.moment(m['ts'])}  {m['agent']}: {_first_line(m['text'])}"
        for m in page["memories"]
    ] or ["no memories"]
    if page["cursor"]:
        lines.append(f"more: assocmem list --cursor {page['cursor']}")
    return "\n".join(lines)


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


@click.command(epilog="Example: assocmem importance 1700000000000-0 5")
@click.argument("memory_id")
@click.argument("importance", type=int)
@common
@click.pass_context
def importance(
    ctx: click.Context, memory_id: str, importance: int, url: str | None, as_json: bool
) -> None:
    """Set a memory's importance, 1 (trivial) to 5 (vital): it scales rank and slows decay."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        response = client.set_importance(memory_id, importance)
        emit(
            ctx,
            response,
            lambda r: f"importance of {r['id']} is {r['importance']} at {r['position']}",
        )


@click.command(
    epilog="Example: assocmem feedback --ids 1700000000000-0 --outcome 1 --concepts timeout"
)
@click.option("--ids", required=True, help="Comma-separated ids of the memories the answer used.")
@click.option("--outcome", type=float, required=True, help="-1 (harmful) to 1 (fully helpful).")
@click.option("--concepts", help="Comma-separated concepts of the query.")
@click.option("--text", help="The query text, when --concepts is not given.")
@click.option("--key", help="Idempotency key.")
@common
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
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        emit(
            ctx,
            client.feedback(split(ids) or [], outcome, split(concepts), text, key),
            render.fed_back,
        )


def _shown(r: dict[str, Any]) -> str:
    scope = [f"{k} {r[k]}" for k in ("user", "session", "namespace") if r.get(k)]
    lines = [
        f"{r['id']}  {r['kind']} by {r['agent']} at {render.moment(r['ts'])}",
        r["text"],
        f"concepts: {', '.join(r['concepts']) or '(none)'}",
        f"importance {r['importance']}  valence {r['valence']:+.2f}  accesses {r['accesses']}"
        + (f"  ({', '.join(scope)})" if scope else ""),
    ]
    if r.get("metadata"):
        lines.append("metadata: " + ", ".join(f"{k}={v}" for k, v in r["metadata"].items()))
    if r.get("superseded_by"):
        lines.append(f"superseded by {r['superseded_by']}")
    return "\n".join(lines)


def _metadata(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """KEY=VALUE options as metadata: a value that reads as a JSON scalar is that value."""
    found: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--metadata")
        found[key] = _scalar(value)
    return found or None
