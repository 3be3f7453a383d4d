"""Time each process of the pipeline spends in Python's cyclic garbage collector during a
burst: short events (batches of 1,000 from `--publishers` processes, as
`short_events.py` sends them) or `--notes` commit messages (batches of 500, as
`ingest_cpu.py` writes them).

The pipeline (`up`) starts with a `sitecustomize` first on PYTHONPATH that times every
collection with `gc.callbacks` in every Python process it runs (API, extraction helper,
worker, cron, `up` itself) and writes the totals to a file every half second. The burst
starts once the pipeline has warmed up; the figures are those of the burst alone, per
process: collections of each generation and the seconds they took. Unlike a rate, this
is the collector's own time, which a shared machine's neighbours barely move.

    .venv/bin/python bench/collector_time.py --events 100000
    .venv/bin/python bench/collector_time.py --corpus ../shared/data/corpus_en.jsonl --notes 30000
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from recall import write_all  # bench/ is on sys.path when a script here runs
from short_events import publish_together  # bench/ is on sys.path when a script here runs
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up

METER = """
import gc, json, multiprocessing, os, sys, threading, time

_totals = {"collections": [0, 0, 0], "seconds": [0.0, 0.0, 0.0]}
_began = [0.0]


def _timed(phase, info):
    if phase == "start":
        _began[0] = time.perf_counter()
        return
    _totals["collections"][info["generation"]] += 1
    _totals["seconds"][info["generation"]] += time.perf_counter() - _began[0]


def _role():
    if multiprocessing.parent_process() is not None:
        return "helper"
    words = [w for w in sys.argv if w in ("up", "serve", "worker", "cron")]
    return words[0] if words else os.path.basename(sys.argv[0] or "python")


def _write():
    path = os.path.join(os.environ["ASSOCMEM_GC_STATS"], f"{os.getpid()}.json")
    while True:
        time.sleep(0.5)
        with open(path + ".part", "w") as out:
            json.dump({"role": _role(), **_totals}, out)
        os.replace(path + ".part", path)


gc.callbacks.append(_timed)
threading.Thread(target=_write, daemon=True).start()
"""


def totals(stats: Path) -> dict[int, dict]:
    found = {}
    for path in stats.glob("*.json"):
        try:
            found[int(path.stem)] = json.loads(path.read_text())
        except (ValueError, OSError):  # written meanwhile
            continue
    return found


def commit_messages(url: str, key: str, rows: list[dict]) -> float:
    """Rows written as `recall.py` writes them; their rate."""
    with Client(url, api_key=key, timeout=600) as client:
        start = time.perf_counter()
        write_all(client, rows, 500)
    return len(rows) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000, help="short events")
    parser.add_argument("--publishers", type=int, default=4)
    parser.add_argument("--corpus", type=Path, help="corpus_en.jsonl: commit messages instead")
    parser.add_argument("--notes", type=int, default=30_000)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes + 1000) if args.corpus else []
    with tempfile.TemporaryDirectory(prefix="assocmem-gc-") as directory:
        meter, stats = Path(directory) / "meter", Path(directory) / "stats"
        meter.mkdir()
        stats.mkdir()
        (meter / "sitecustomize.py").write_text(METER)
        path = os.pathsep.join(filter(None, [str(meter), os.environ.get("PYTHONPATH")]))
        env = {**UNLIMITED, "PYTHONPATH": path, "ASSOCMEM_GC_STATS": str(stats)}
        process, banner = spawn_up(Path(directory) / "data", env)
        url, key = banner_url(banner), read_key_file(Path(directory) / "data") or ""
        try:
            if args.corpus:  # the first batches start the extraction helper; rows of their
                commit_messages(url, key, rows[args.notes :])  # own: no key repeats later
            else:
                publish_together(url, key, 4000, 1)
            time.sleep(1.0)
            before = totals(stats)
            if args.corpus:
                rate = commit_messages(url, key, rows[: args.notes])
                what = f"{args.notes:,} commit messages in batches of 500"
            else:
                rate = publish_together(url, key, args.events, args.publishers)
                what = f"{args.events:,} short events, {args.publishers} publishers"
            time.sleep(1.5)  # the last totals written
            after = totals(stats)
        finally:
            process.terminate()
            process.wait(60)
    print(f"{what}: {rate:,.0f}/s; time in the cyclic collector during the burst:")
    for pid, now in sorted(after.items(), key=lambda item: item[1]["role"]):
        then = before.get(pid, {"collections": [0, 0, 0], "seconds": [0.0, 0.0, 0.0]})
        counts = [a - b for a, b in zip(now["collections"], then["collections"], strict=True)]
        seconds = [a - b for a, b in zip(now["seconds"], then["seconds"], strict=True)]
        print(
            f"  {now['role']:8} collections by generation {counts},"
            f" {sum(seconds):.2f} s ({', '.join(f'{s:.2f}' for s in seconds)})"
        )


if __name__ == "__main__":
    main()
