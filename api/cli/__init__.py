"""The `assocmem` command line: run the pipeline, write, read, teach and inspect memories.

One module per command group, as rq splits its CLI: pipeline (up, serve, worker, cron),
memory (write, read, chain, get, feedback, importance), activity (log, activities, summary),
documents (ingest), audit (graph, state), history (audit link and memory, replay, diff,
dead-letters, jobs), maintenance (consolidate, archive), keys and the MCP server.
"""

from __future__ import annotations

import click

from assocmem.api.cli.group import Group

COMMANDS = {
    "up": "pipeline.up",
    "worker": "pipeline.worker",
    "cron": "pipeline.cron",
    "serve": "pipeline.serve",
    "write": "memory.write",
    "read": "memory.read",
    "chain": "memory.chain",
    "get": "memory.get",
    "importance": "memory.importance",
    "feedback": "memory.feedback",
    "log": "activity.log_activity",
    "activities": "activity.activities",
    "summary": "activity.summary",
    "ingest": "documents.ingest",
    "graph": "audit.graph",
    "state": "audit.state",
    "audit": "history.audit",
    "replay": "history.replay",
    "diff": "history.diff",
    "dead-letters": "history.dead_letters",
    "jobs": "history.jobs",
    "consolidate": "maintenance.consolidate",
    "archive": "maintenance.archive",
    "forget": "maintenance.forget",
    "keys": "keys.keys",
    "mcp": "mcp.mcp",
}
"""Each command's module and name in this package, imported when the command runs: the API
and the workers, started by `up`, import none of the client commands' modules."""


@click.group(
    cls=Group,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option("0.1.0", prog_name="assocmem")
def main() -> None:
    """Long-term associative memory for AI agents.

    Start the pipeline with `assocmem up`, then write, read and teach it from
    another terminal. Every command has --help with an example.
    """
