"""Publishing at rate, as issue 14 measures it, on one pipeline (`up`, one API process):

- short events (100-character notes with their concepts given, so no extraction) appended
  in batches of 1,000 through `POST /v1/events/batch`: events/s, from one publisher and
  from `--publishers` processes at once (each builds its batches before the clock starts);
- single-event appends: p50 and p95 latency;
- reads (standard depth) on an idle pipeline, then while a second client appends batches
  at half the rate measured above: p50 of each, and their ratio.

    .venv/bin/python bench/short_events.py --events 100000
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import tempfile
import threading
import time
from multiprocessing.synchronize import Event
from pathlib import Path

from key_rates import timed  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up

WORDS = [f"w{n}" for n in range(2000)]


def short_note(rng: random.Random) -> dict[str, object]:
    concepts = rng.sample(WORDS, 4)
    text = (" ".join(concepts) + " ") * 6
    return {"type": "memory", "text": text[:100], "concepts": concepts}


def publish_batches(url: str, key: str, count: int, seed: int, start: Event) -> None:
    rng = random.Random(seed)
    batches = [[short_note(rng) for _ in range(1000)] for _ in range(0, count, 1000)]
    with Client(url, timeout=600, api_key=key) as client:
        start.wait()
        for batch in batches:
            client.publish(batch)


def publish_together(url: str, key: str, events: int, publishers: int) -> float:
    """Events/s of `publishers` processes appending `events` in all, from the same instant."""
    start = multiprocessing.Event()
    share = -(-events // publishers // 1000) * 1000
    processes = [
        multiprocessing.Process(target=publish_batches, args=(url, key, share, n, start))
        for n in range(publishers)
    ]
    for process in processes:
        process.start()
    time.sleep(2.0)  # every publisher has built its batches
    began = time.perf_counter()
    start.set()
    for process in processes:
        process.join()
        if process.exitcode:
            raise SystemExit(f"a publisher failed (exit {process.exitcode})")
    return share * publishers / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000, help="short events in batches")
    parser.add_argument("--singles", type=int, default=1_000, help="single-event appends")
    parser.add_argument("--reads", type=int, default=300, help="reads, idle and under load")
    parser.add_argument(
        "--publishers", type=int, default=4, help="processes publishing at once (default 4)"
    )
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="assocmem-short-") as directory:
        home = Path(directory) / "data"
        process, banner = spawn_up(home, UNLIMITED)
        url, key = banner_url(banner), read_key_file(home)
        try:
            with Client(url, timeout=600, api_key=key) as client:
                start = time.perf_counter()
                for _ in range(0, args.events, 1000):
                    client.publish([short_note(rng) for _ in range(1000)])
                rate = args.events / (time.perf_counter() - start)
                print(f"short events in batches of 1,000, one publisher: {rate:,.0f}/s")
                together = publish_together(url, key, args.events, args.publishers)
                print(
                    f"short events in batches of 1,000, {args.publishers} publishers:"
                    f" {together:,.0f}/s"
                )
                singles = [timed(client.publish, [short_note(rng)]) for _ in range(args.singles)]
                singles.sort()
                print(
                    f"single-event appends: p50 {statistics.median(singles):.2f} ms,"
                    f" p95 {singles[int(0.95 * len(singles))]:.2f} ms"
                )
                queries = [rng.sample(WORDS, 2) for _ in range(args.reads)]
                idle = [timed(client.read, concepts=q, record_access=False) for q in queries]
                stop = threading.Event()

                def append_at(per_second: float) -> None:
                    with Client(url, timeout=600, api_key=key) as writer:
                        while not stop.is_set():
                            began = time.perf_counter()
                            writer.publish([short_note(random.Random()) for _ in range(1000)])
                            stop.wait(max(0.0, 1000 / per_second - (time.perf_counter() - began)))

                loader = threading.Thread(target=append_at, args=(rate / 2,))
                loader.start()
                try:
                    busy = [timed(client.read, concepts=q, record_access=False) for q in queries]
                finally:
                    stop.set()
                    loader.join()
                quiet, loaded = statistics.median(idle), statistics.median(busy)
                print(
                    f"reads p50: idle {quiet:.2f} ms, appends at {rate / 2:,.0f}/s {loaded:.2f} ms,"
                    f" ratio {loaded / quiet:.2f}"
                )
        finally:
            process.terminate()
            process.wait(60)


if __name__ == "__main__":
    main()
