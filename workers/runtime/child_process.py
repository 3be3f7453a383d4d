"""Children that end with the process that started them, however it ends.

Linux sends a child a signal when its parent dies (prctl PR_SET_PDEATHSIG), SIGKILL of
the parent included; the setting survives exec, so it works for redis-server too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
LISTEN_FD = "ASSOCMEM_LISTEN_FD"
"""Set for the API `up` starts: the listening socket `up` holds for it, inherited. Bound
once, before anything starts: a port already taken stops `up` at once (an API that could
not bind it was restarted every 2 s while the other program answered `up`'s health
checks), and no other program can take it while the API restarts. Here, not beside `up`:
`serve` reads it at start and imports this module anyway."""


def dies_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A `preexec_fn` for subprocess.Popen: send the child `signum` when this process dies
    (on Linux; None elsewhere, where a child outlives a killed parent)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)

    return preexec


def exit_with(parent: int, every: float = 0.5) -> None:
    """End this process within `every` seconds of its parent `parent` (for a process a
    library started, such as a pool's helper, where no `preexec_fn` can be given; and
    PR_SET_PDEATHSIG would fire when the parent's *thread* that started it ends)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()
