"""`assocmem mcp`: the MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

import click
import orjson

from assocmem.api.cli.common import client_of, common, remember


@click.command(
    epilog="Example: assocmem mcp --transport http --port 8766 (an agent's MCP config runs"
    " `assocmem mcp` with ASSOCMEM_URL and ASSOCMEM_API_KEY set)"
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio (the agent starts the server) or streamable HTTP at http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP transport's address.")
@click.option("--port", type=int, default=8766, show_default=True, help="HTTP transport's port.")
@click.option(
    "--degrade-after",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    help="Seconds a recall may take before it answers empty, flagged degraded.",
)
@click.option("--schemas", is_flag=True, help="Print the tools as function-calling JSON schemas.")
@click.option(
    "--allow-forget",
    is_flag=True,
    help="Add the `forget` tool (erases a user, session or namespace for good; needs an"
    " admin key).",
)
@common
@click.pass_context
def mcp(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    degrade_after: float,
    schemas: bool,
    allow_forget: bool,
    url: str | None,
    as_json: bool,
) -> None:
    """Serve assocmem's tools over MCP: remember, recall (with the `via` paths), feedback,
    find_chain, log_activity, graph. The tenant, agent and permissions are those of the key
    (--api-key, ASSOCMEM_API_KEY, else the local `up`'s): no tool argument names them. A
    recall that cannot reach the service within --degrade-after answers empty and flagged
    `degraded`, so a memory outage never fails the agent's run."""
    from assocmem.api.client.sync import Client
    from assocmem.api.mcp.server import build_server, tool_schemas

    remember(ctx, url, as_json)
    if schemas:  # no call is made: no key is needed to see the tools
        with Client("http://127.0.0.1") as nowhere:
            listed = tool_schemas(build_server(nowhere, allow_forget))
        click.echo(orjson.dumps(listed, option=orjson.OPT_INDENT_2).decode())
        return
    client = client_of(ctx, degrade_after=degrade_after)
    server = build_server(client, allow_forget)
    with client:
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
