"""The stop signals (SIGTERM, SIGINT) of a worker or a cron go to its main thread only.

The kernel gives a signal sent to a process to any thread that does not block it. Python
runs the handler in the main thread, but only once that thread runs Python again: a worker
waiting for a job sits in RQ's blocking pop for up to 405 s, and a handler that runs late
runs wherever the thread then is, even inside a library's `except Exception`. Once a worker
told to stop was still waiting an hour later, retrying a Redis that had gone. Every other
thread blocks them: those started while the main thread blocks them inherit it (numpy's
OpenBLAS thread at its import, the schedulers', RQ's pubsub thread), and the job's
heartbeat thread blocks them itself. Given to the main thread, a signal interrupts its wait.
Nothing heavy is imported here: the CLI blocks them before it imports numpy.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


def block() -> None:
    """In this thread, and in the threads it starts from now on."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def unblock() -> None:
    """In this thread (a signal that came meanwhile is taken now)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def kept_from_new_threads() -> Iterator[None]:
    """Threads started within never take a stop signal; this one takes them again after."""
    block()
    try:
        yield
    finally:
        unblock()
