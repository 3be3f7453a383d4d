"""`assocmem ui`: the web page, opened already logged in."""

from __future__ import annotations

import webbrowser

import click

from assocmem.api.cli.common import client_of, common, remember
from assocmem.api.client.local import local_home, read_key_file

PAGES = "search, memories/ID, links/A/B, concepts/C, diff, operators"


@click.command(
    epilog="Example: assocmem ui 'search?q=billing timeout'\n\n"
    "\b\nMore:\n  assocmem ui\n  assocmem ui links/billing/timeout --print"
)
@click.argument("page", default="search")
@click.option(
    "--print",
    "only_print",
    is_flag=True,
    help="Print the address (it holds the key) instead of opening a browser.",
)
@common
@click.pass_context
def ui(ctx: click.Context, page: str, only_print: bool, url: str | None, as_json: bool) -> None:
    """Open the web page at PAGE (default: search), logged in with this command's key.

    PAGE is one of: search, memories/ID, links/A/B, concepts/C, diff, operators (with a
    query, as `search?q=...`). The key travels in the address's fragment (after #), which
    a browser never sends to a server or writes in its logs; the page keeps it for that
    tab only. Where no browser can be started (a server over SSH), the address is printed:
    open it where a browser runs, through a tunnel to the API's port.
    """
    remember(ctx, url, as_json)
    client = client_of(ctx)
    client.health()  # a wrong key or URL is said here, not on a page
    key = ctx.obj.get("api_key") or read_key_file(local_home())
    address = f"{client.url}/ui/{page.removeprefix('/').removeprefix('ui/')}#key={key}"
    if only_print or not webbrowser.open(address):
        click.echo(address)
        if not only_print:
            click.echo("no browser could be started here: open the address above", err=True)
        return
    click.echo(f"opened {client.url}/ui/{page} in your browser, logged in")
