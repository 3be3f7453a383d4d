"""One thread for the native math libraries (OpenBLAS, OpenMP) in every assocmem process.

OpenBLAS starts a thread per core and splits even a 150 x 150 solve (a deep read's
PageRank) across them, the caller spinning until its helpers are done. A server that
answers one small read at a time, next to Redis and the workers on the same cores, gains
nothing from that and pays a thread wake-up and a spin on every read: callgrind counted
400-700 million instructions for deep reads whose own work is 10 million
(bench/work.py).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def limit_native_threads() -> None:
    """For the rest of the process (not a context manager: the limit stays set)."""
    threadpool_limits(limits=1)
