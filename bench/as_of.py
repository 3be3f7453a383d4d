"""`as_of` reads on a kept data directory (`bench/history_scale.py --keep DIR`), with the
snapshots kept on disk (workers/store/snapshot_rungs.py) and without them, in turns (issue 16:
at most 1 s at a million events).

Each turn starts `assocmem up` on the directory (without them: `ASSOCMEM_SNAPSHOT_RUNGS`
set empty, so the processes read none; the worker writes none either, and none is
removed), waits for its first read, then times one `as_of` read at each of `--points`
(shares of the time from the log's first entry to `--end`, by default its last), latest
first, and stops it. Each point is read once per turn and before any earlier one, so each
is rebuilt from the snapshot nearest before it, never from a rebuild a read before it kept.
A log `history_scale.py` wrote ends with a minute of jobs after its writes: give `--end`
the position of its last write (its 90% point, 90% of the way in time, tells it).

    .venv/bin/python bench/as_of.py /tmp/kept/data --turns 2
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import redis
from cold_start import first_read  # bench/ is on sys.path when a script here runs
from history_scale import answered, drain  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.workers.store.redis.keys import log_key


def points_of(redis_url: str, tenant: str, shares: list[float], end: str | None) -> list[str]:
    """Positions at `shares` of the tenant's log, by the times of its first entry and `end`
    (default: its last)."""
    client = redis.Redis.from_url(redis_url)
    try:
        first = client.xrange(log_key(tenant), count=1)[0][0].decode()
        end = end or client.xrevrange(log_key(tenant), count=1)[0][0].decode()
    finally:
        client.close()
    start, stop = int(first.split("-")[0]), int(end.split("-")[0])
    return [f"{start + round((stop - start) * share)}-0" for share in shares]


def turn(
    home: Path, kept: bool, shares: list[float], end: str | None, concept: str, settle: float
) -> list[float]:
    env = {**UNLIMITED} | ({} if kept else {"ASSOCMEM_SNAPSHOT_RUNGS": ""})
    process, banner = spawn_up(home, env, timeout=600)
    drain(process)
    try:
        key = read_key_file(home) or ""
        first_read(banner_url(banner), key, [concept], 600)
        time.sleep(settle)  # the worker's own start (it loads the latest state) over
        info = read_run_file(home)
        assert info is not None and info.redis_url
        points = points_of(info.redis_url, "default", shares, end)
        with Client(banner_url(banner), timeout=1800, api_key=key) as client:
            times = {
                point: answered(client.read, concepts=[concept], as_of=point, record_access=False)[
                    0
                ]
                for point in sorted(points, key=lambda p: int(p.split("-")[0]), reverse=True)
            }
        return [times[point] for point in points]
    finally:
        process.terminate()
        process.wait(120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("home", type=Path, help="a data directory history_scale.py kept")
    parser.add_argument("--turns", type=int, default=2, help="turns of each, alternating")
    parser.add_argument("--points", default="0.1,0.3,0.5,0.7,0.9", help="shares of the log")
    parser.add_argument("--concept", default="fix", help="what the reads ask for")
    parser.add_argument("--end", help="the position the shares end at (default: the last)")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds to wait after the first read (default 0: the first points are read"
        " while the worker still loads its state beside them)",
    )
    parser.add_argument(
        "--kept-only", action="store_true", help="no turns without the snapshots on disk"
    )
    args = parser.parse_args()
    if not (args.home / "redis").is_dir():
        parser.error(f"{args.home} holds no pipeline's data (no redis/ in it)")
    shares = [float(share) for share in args.points.split(",")]
    found: dict[bool, list[list[float]]] = {True: [], False: []}
    for _ in range(args.turns):
        for kept in (True,) if args.kept_only else (False, True):
            start = time.perf_counter()
            times = turn(args.home, kept, shares, args.end, args.concept, args.settle)
            found[kept].append(times)
            label = "with the snapshots on disk" if kept else "Redis's snapshots only  "
            print(
                f"{label}: "
                + ", ".join(f"{s:.0%} {t:.2f} s" for s, t in zip(shares, times, strict=True))
                + f"  (turn {time.perf_counter() - start:.0f} s)"
            )
    for kept, turns in found.items():
        if not turns:
            continue
        medians = [statistics.median(column) for column in zip(*turns, strict=True)]
        label = "with them" if kept else "without  "
        print(
            f"median {label}: "
            + ", ".join(f"{s:.0%} {t:.2f} s" for s, t in zip(shares, medians, strict=True))
        )


if __name__ == "__main__":
    main()
