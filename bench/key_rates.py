"""What per-key rate limits cost a request: two pipelines side by side, one with the default
limits and one unlimited, sent the same single-event appends and health checks in
alternation (this machine is shared: medians of pairs taken in one run).

    .venv/bin/python bench/key_rates.py --requests 2000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def timed(call, *args, **kwargs) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    call(*args, **kwargs)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="of each kind per pipeline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assocmem-limits-") as directory:
        home = Path(directory)
        # Default limits, but high enough that a sequential client never meets them.
        limited_env = {"ASSOCMEM_KEY_REQUESTS": "100000", "ASSOCMEM_KEY_EVENTS": "1000000"}
        pipelines = {
            "limited": spawn_up(home / "limited", limited_env),
            "unlimited": spawn_up(home / "unlimited", UNLIMITED),
        }
        try:
            clients = {
                name: Client(banner_url(banner), api_key=read_key_file(home / name))
                for name, (_, banner) in pipelines.items()
            }
            times: dict[tuple[str, str], list[float]] = {}
            for i in range(args.requests):
                for name, client in clients.items():
                    note = timed(client.write, f"short note {i}", concepts=["a", f"c{i % 50}"])
                    health = timed(client.health)
                    if i >= 100:  # warm-up
                        times.setdefault((name, "append"), []).append(note)
                        times.setdefault((name, "health"), []).append(health)
            for kind in ("append", "health"):
                limited = statistics.median(times[("limited", kind)])
                free = statistics.median(times[("unlimited", kind)])
                print(
                    f"{kind:<7} p50 limited {limited:6.2f} ms  unlimited {free:6.2f} ms"
                    f"  ratio {limited / free:4.2f}"
                )
        finally:
            for process, _ in pipelines.values():
                process.terminate()
                process.wait(60)


if __name__ == "__main__":
    main()
