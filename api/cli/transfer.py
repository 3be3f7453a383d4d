"""export and import: a tenant's events as JSON lines, and back."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import click
import orjson

from assocmem.api.cli.common import client_of, common, emit, remember

BATCH = 1000
"""Lines sent in one import request (the API's most)."""


@click.command(epilog="Example: assocmem export --user alice --out alice.jsonl")
@click.option("--user", help="Only the events about this user.")
@click.option("--session", help="Only the events of this session.")
@click.option("--namespace", help="Only the events of this namespace.")
@click.option("--since", help="Only events at or after this stream position or ISO time.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    default="-",
    show_default=True,
    help="File to write the JSON lines to (- for standard output).",
)
@functools.partial(common, scoped=False)
@click.pass_context
def export(
    ctx: click.Context,
    user: str | None,
    session: str | None,
    namespace: str | None,
    since: str | None,
    out: str,
    url: str | None,
    as_json: bool,
) -> None:
    """Write the tenant's events as JSON lines, oldest first, one {position, event} a line
    (the event as the log keeps it): a backup, or what `assocmem import` appends to another
    pipeline. Needs an admin key."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        lines = client.export_events(user=user, session=session, namespace=namespace, since=since)
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        Path(out).write_bytes(data)
    where = "standard output" if out == "-" else out
    click.echo(f"exported {len(lines)} events to {where}", err=out == "-")


@click.command("import", epilog="Example: assocmem import alice.jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@functools.partial(common, scoped=False)
@click.pass_context
def import_(ctx: click.Context, file: str, url: str | None, as_json: bool) -> None:
    """Append the events of an export: into an empty tenant at their own positions (the
    state is then the source's, to the content hash), else anew. Importing the same file
    twice stores nothing twice. Every line is checked before any is sent. Needs an admin
    key."""
    remember(ctx, url, as_json)
    raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    lines: list[Any] = []
    for number, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                lines.append(orjson.loads(line))
            except orjson.JSONDecodeError as exc:
                raise click.BadParameter(
                    f"line {number} is not JSON: {exc}", param_hint="FILE"
                ) from None
    if not lines:
        raise click.BadParameter("it holds no events", param_hint="FILE")
    total = {"events": 0, "appended": 0, "duplicates": 0, "kept_positions": True, "position": None}
    hidden = as_json or not sys.stderr.isatty() or len(lines) <= BATCH
    with (
        client_of(ctx) as client,
        click.progressbar(
            length=len(lines), label="importing", file=sys.stderr, hidden=hidden
        ) as bar,
    ):
        for start in range(0, len(lines), BATCH):
            done = client.import_events(lines[start : start + BATCH])
            for field in ("events", "appended", "duplicates"):
                total[field] += done[field]
            total["kept_positions"] = total["kept_positions"] and done["kept_positions"]
            total["position"] = done["position"] or total["position"]
            bar.update(done["events"])
    emit(ctx, total, _imported)


def _imported(done: dict[str, Any]) -> str:
    how = "at their own positions" if done["kept_positions"] else "anew"
    return (
        f"imported {done['events']} events: {done['appended']} appended {how},"
        f" {done['duplicates']} there already"
    )
