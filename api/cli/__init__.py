"""The `assocmem` command line: run the pipeline, write, read, teach and inspect memories.

One module per command group, as rq splits its CLI: pipeline (up, serve, worker, cron),
memory (write, read, chain, feedback, importance), activity (log, activities, summary),
documents (ingest), audit (graph, state), history (audit link and memory, replay, diff,
dead-letters, jobs), maintenance (consolidate, archive), keys and the MCP server.
"""

from __future__ import annotations

import click

from . import activity, audit, documents, history, keys, maintenance, mcp, memory, pipeline
from .common import Group


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="assocmem")
def main() -> None:
    """Long-term associative memory for AI agents.

    Start the pipeline with `assocmem up`, then write, read and teach it from
    another terminal. Every command has --help with an example.
    """


for _command in (
    pipeline.up,
    pipeline.worker,
    pipeline.cron,
    pipeline.serve,
    memory.write,
    memory.read,
    memory.chain,
    memory.importance,
    memory.feedback,
    activity.log_activity,
    activity.activities,
    activity.summary,
    documents.ingest,
    audit.graph,
    audit.state,
    history.audit,
    history.replay,
    history.diff,
    history.dead_letters,
    history.jobs,
    maintenance.consolidate,
    maintenance.archive,
    maintenance.forget,
    keys.keys,
    mcp.mcp,
):
    main.add_command(_command)
