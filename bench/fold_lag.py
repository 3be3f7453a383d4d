"""Fold lag under a sustained append rate (issue 16: p99 at most 1 s at 5,000 appends/s
for 60 s): how long the oldest event that no published snapshot holds has waited,
sampled every quarter second while a publisher appends short events at `--rate`.

One pipeline (`up`); the publisher sends batches of `--batch` 100-character notes with
their concepts given, paced to the rate; a second thread reads the latest snapshot's
position and the log after it from Redis. Prints the rate reached, lag p50/p99/max, and
the snapshots published.

    .venv/bin/python bench/fold_lag.py --rate 5000 --seconds 60
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from short_events import short_note  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.engine.position import ZERO
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import load_settings

SAMPLE_EVERY = 0.25


def publish_at(url: str, key: str, rate: float, batch: int, seconds: float) -> int:
    rng = random.Random(11)
    sent, start = 0, time.perf_counter()
    with Client(url, timeout=600, api_key=key) as client:
        while time.perf_counter() - start < seconds:
            client.publish([short_note(rng) for _ in range(batch)])
            sent += batch
            ahead = sent / rate - (time.perf_counter() - start)
            if ahead > 0:
                time.sleep(ahead)
    return sent


def sample_lag(runtime: Runtime, stop: threading.Event) -> tuple[list[float], set[str]]:
    lags: list[float] = []
    published: set[str] = set()
    while not stop.wait(SAMPLE_EVERY):
        snapshot = runtime.snapshots.latest_position("default")
        published.add(str(snapshot))
        after = runtime.log.entries("default", snapshot or ZERO, count=1)
        lags.append(max(0.0, time.time() - after[0][0].ms / 1000) if after else 0.0)
    return lags, published


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=5000.0, help="appends per second")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--batch", type=int, default=250, help="events per request")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assocmem-lag-") as directory:
        home = Path(directory) / "data"
        process, banner = spawn_up(home, UNLIMITED)
        try:
            info = read_run_file(home)
            assert info is not None
            runtime = Runtime.connect(load_settings({"REDIS_URL": info.redis_url}))
            stop = threading.Event()
            found: dict[str, tuple[list[float], set[str]]] = {}
            sampler = threading.Thread(
                target=lambda: found.setdefault("lag", sample_lag(runtime, stop))
            )
            sampler.start()
            start = time.perf_counter()
            sent = publish_at(
                banner_url(banner), read_key_file(home) or "", args.rate, args.batch, args.seconds
            )
            elapsed = time.perf_counter() - start
            stop.set()
            sampler.join()
            lags, published = found["lag"]
            redis_memory = runtime.queue_connection.info("memory")["used_memory"]  # type: ignore[union-attr]
            cpu = runtime.queue_connection.info("cpu")  # type: ignore[union-attr]
            redis_cpu = cpu["used_cpu_user"] + cpu["used_cpu_sys"]
            runtime.close()
        finally:
            process.terminate()
            process.wait(60)
        on_disk = sum(f.stat().st_size for f in home.rglob("*") if f.is_file())
    values = np.array(lags[int(2 / SAMPLE_EVERY) :])  # past the first two seconds
    print(
        f"appended {sent:,} events in {elapsed:.1f} s ({sent / elapsed:,.0f}/s, asked"
        f" {args.rate:,.0f}/s); {len(published) - 1} snapshots published"
    )
    print(
        f"Redis memory {redis_memory / 1e6:,.0f} MB, CPU {redis_cpu:.1f} s"
        f" ({redis_cpu / sent * 1e6:.0f} us an event); data directory {on_disk / 1e6:,.0f} MB"
    )
    print(
        f"fold lag (oldest event no snapshot holds), {len(values)} samples:"
        f" p50 {np.percentile(values, 50):.2f} s, p99 {np.percentile(values, 99):.2f} s,"
        f" max {values.max():.2f} s"
    )


if __name__ == "__main__":
    main()
