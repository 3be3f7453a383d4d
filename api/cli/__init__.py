"""The `assocmem` command line: run the pipeline, write, read, teach and inspect memories.

One module per command group, as rq splits its CLI: pipeline (up, serve, worker, cron),
memory (write, read, chain, get, feedback, importance), activity (log, activities, summary),
documents (ingest), audit (graph, state), history (audit link and memory, replay, diff,
dead-letters, jobs), maintenance (consolidate, archive), keys, the MCP server and the
web page (ui).
"""

from __future__ import annotations

import click

from assocmem.api.cli.group import Group

PROCESSES = {
    "up": "pipeline.up",
    "worker": "pipeline.worker",
    "cron": "pipeline.cron",
    "serve": "pipeline.serve",
}
"""The commands that run the pipeline's processes, each found by its module and name and
imported alone: `up` starts the API and the workers through this command line, and none
of them imports a client command's module."""
CLIENT_MODULES = (
    "memory",
    "activity",
    "documents",
    "audit",
    "history",
    "maintenance",
    "transfer",
    "keys",
    "mcp",
    "web",
)
"""The modules whose commands talk to the API: every command defined at the top of one
is a command of `assocmem`, found when it is first asked for."""


@click.group(
    cls=Group,
    lazy=PROCESSES,
    found_in=CLIENT_MODULES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option("0.1.0", prog_name="assocmem")
def main() -> None:
    """Long-term associative memory for AI agents.

    Start the pipeline with `assocmem up`, then write, read and teach it from
    another terminal. Every command has --help with an example.
    """
