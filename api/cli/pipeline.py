"""Running the pipeline: everything at once (`up`), or the API and a worker apart."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from pathlib import Path

import click

from assocmem.api.logs import configure_logging, stacks_on_sigusr1
from assocmem.workers.runtime.settings import load_settings
from assocmem.workers.state.heap import collect_young_less_often, collection_paused


@click.command(epilog="Example: assocmem up --data ./.assocmem --port 8765")
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
    help="Embedded Redis AOF fsync policy: always (before it answers a write: nothing"
    " acknowledged is lost when Redis or the machine dies) or everysec (a little faster;"
    " a kill while the disk stalls may lose up to 2 s of writes) [env ASSOCMEM_APPENDFSYNC;"
    " default: always].",
)
@click.option(
    "--cluster",
    "masters",
    type=click.IntRange(3, 9),
    envvar="ASSOCMEM_CLUSTER",
    default=None,
    help="Keep the data in a local Redis Cluster of this many masters, a replica each, on"
    " loopback (the same redis-server binaries), to try what a cluster does; the queues stay"
    " in the embedded Redis [env ASSOCMEM_CLUSTER].",
)
def up(home: Path, port: int, workers: int, appendfsync: str | None, masters: int | None) -> None:
    """Run the whole pipeline: Redis (embedded unless REDIS_URL is set), API and workers.

    Prints the URL it serves when ready; Ctrl-C stops everything. A later `up`
    on the same --data finds the same memories and the same taught links.
    """
    from assocmem.api.ops.supervisor import run_pipeline

    settings = load_settings(os.environ, home=home, port=port, appendfsync=appendfsync)
    run_pipeline(
        settings,
        workers,
        echo=lambda line: click.echo(line, err=False) or sys.stdout.flush(),
        cluster_masters=masters or 0,
    )


@click.command(epilog="Example: REDIS_URL=redis://127.0.0.1:6379/0 assocmem worker")
@click.option("--burst", is_flag=True, help="Run the queued jobs, then exit.")
def worker(burst: bool) -> None:
    """Run one RQ worker (fold, consolidation and replay jobs) and the fold scheduler.
    Needs REDIS_URL."""
    from assocmem.workers.runtime.stop_signals import kept_from_new_threads

    # numpy's import starts OpenBLAS's thread: it must never take a stop signal
    with collection_paused(), kept_from_new_threads():  # see serve
        import redis

        from assocmem.workers.runtime.services import Runtime
        from assocmem.workers.runtime.worker import run_worker

    configure_logging()
    stacks_on_sigusr1()
    collect_young_less_often()
    try:
        run_worker(Runtime.connect(load_settings(os.environ)), burst=burst)
    except (redis.ConnectionError, redis.TimeoutError) as exc:  # RQ's own, when it stops
        raise click.ClickException(f"worker: Redis went away: {exc}") from exc


@click.command(
    epilog="Example: REDIS_URL=redis://127.0.0.1:6379/0 ASSOCMEM_TZ=Europe/Paris assocmem cron"
)
def cron() -> None:
    """Run the nightly sleep consolidation's cron: at ASSOCMEM_CONSOLIDATE_AT (default 02:30)
    in ASSOCMEM_TZ it queues one consolidation per tenant for the workers. Run as many as you
    like: one holds a lease in Redis and fires, the others stand by and take over within 30 s
    of it dying. `up` runs one. Needs REDIS_URL."""
    import signal
    import threading

    from assocmem.workers.runtime.stop_signals import kept_from_new_threads

    with collection_paused(), kept_from_new_threads():  # see serve, and worker
        from assocmem.workers.jobs.cron import run_cron
        from assocmem.workers.runtime.services import Runtime

    configure_logging()
    stacks_on_sigusr1()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    runtime = Runtime.connect(load_settings(os.environ))
    try:
        run_cron(runtime, stop)
    finally:
        runtime.close()


def open_files_to_the_hard_limit() -> None:
    """Raise the soft limit of open files to the hard one: many a system's default (1,024)
    is a few hundred idle sockets from refusing every new connection."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@click.command(epilog="Example: REDIS_URL=redis://127.0.0.1:6379/0 assocmem serve --port 8765")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, envvar="ASSOCMEM_PORT", default=8765, show_default=True)
def serve(host: str, port: int) -> None:
    """Run the HTTP API alone (OpenAPI docs at /docs). Needs REDIS_URL."""
    configure_logging()  # its start, the states it loads, its warnings; no line per request
    stacks_on_sigusr1()
    open_files_to_the_hard_limit()  # idle sockets cost a descriptor each
    settings = load_settings(os.environ, host=host, port=port)
    collect_young_less_often()  # before the pause below: the preload may outlast it
    # The imports and the app make objects that live as long as the process: collections
    # in their midst only walked them, a tenth of the imports' time.
    with collection_paused():
        from assocmem.workers.state.preload import StatePreload

        # Loading while the rest imports (workers/state/preload.py)
        preload = StatePreload(settings) if settings.redis_url else None
        import uvicorn

        from assocmem.api.http.app import create_app
        from assocmem.api.http.protocol import deadline_protocol
        from assocmem.workers.runtime.child_process import LISTEN_FD

        app = create_app(settings, preload=preload)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,  # ours (configure_logging): JSON lines with the request id
        access_log=False,
        http=deadline_protocol(settings.header_timeout, settings.body_timeout),
        # no limit_concurrency: it counts idle sockets too (api/http/in_flight.py caps requests)
    )
    inherited = os.environ.get(LISTEN_FD)  # `up`'s socket, else our own
    sockets = [socket.socket(fileno=int(inherited))] if inherited else None
    uvicorn.Server(config).run(sockets=sockets)
