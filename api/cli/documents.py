"""Documents: feed text and CSV files into the links."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import client_of, common, emit, remember


@click.command(
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
@common
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
    from assocmem.api.client.ingest import pieces

    remember(ctx, url, as_json)
    total = sum(p.stat().st_size for p in paths)
    results = []
    with (
        client_of(ctx) as client,
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
    emit(ctx, summary_, render.ingested)
