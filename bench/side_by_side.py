"""Read latency of two installs side by side: the same commits written to both, then the same
reads alternating between them, one request at a time.

Each install runs its own `assocmem up` on a temporary directory. Reads alternate which install
goes first, so a stall of the machine lands on both alike; the figure to quote is the median
of the per-read ratios (after / before), not the ratio of two medians.

    .venv/bin/python bench/side_by_side.py ../shared/data/corpus_en.jsonl \\
        --before /path/to/old/venv/bin/python --notes 50000 --reads 200
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recall import DEPTHS, MODES, queries, wait_for_snapshot, wait_until_served, write_all
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import BANNER, UNLIMITED, banner_url
from assocmem.workers.runtime.redis_server import free_port


def spawn(python: str, home: Path) -> tuple[subprocess.Popen[str], str]:
    """`assocmem up` of the install `python` belongs to, and its URL once it serves."""
    command = [
        python,
        "-m",
        "assocmem.api.cli",
        "up",
        "--data",
        str(home),
        "--port",
        str(free_port()),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=home.parent,
        env={**os.environ, **UNLIMITED},
    )
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if line.startswith(BANNER):
            return process, banner_url(line)
        if not line and process.poll() is not None:
            raise SystemExit(f"`up` of {python} exited with {process.returncode} before serving")


def timed_read(client: Client, text: str, depth: str, now: float) -> float:
    start = time.perf_counter()
    client.read(text, depth=depth, now=now, record_access=False, auto_time=False)
    return (time.perf_counter() - start) * 1000


def compare(before: Client, after: Client, rows: list[dict], args: argparse.Namespace) -> None:
    print("writing to before:", flush=True)
    written_before = write_all(before, rows, args.batch)
    print("writing to after:", flush=True)
    written_after = write_all(after, rows, args.batch)
    for client, written in ((before, written_before), (after, written_after)):
        wait_until_served(client, written[-1]["position"])
    for home, written in (
        (args.home / "before", written_before),
        (args.home / "after", written_after),
    ):
        waited = wait_for_snapshot(read_run_file(home).redis_url, written[-1]["position"])
        print(f"snapshot of {home.name} published after {waited:.1f} s of waiting", flush=True)
    now = max(float(r["ts"]) for r in rows)
    print(f"{'queries':<14} {'depth':<8} {'before p50':>10} {'after p50':>10} {'paired ratio':>13}")
    for mode in MODES:
        picked = queries(rows, written_after, args.reads, mode, args.seed)
        for depth in DEPTHS:
            times: dict[str, list[float]] = {"before": [], "after": []}
            for k, (_, text) in enumerate(picked):
                order = (("before", before), ("after", after))
                for name, client in order if k % 2 == 0 else order[::-1]:
                    times[name].append(timed_read(client, text, depth, now))
            ratio = statistics.median(
                b / a for a, b in zip(times["before"], times["after"], strict=True)
            )
            print(
                f"{mode:<14} {depth:<8} {statistics.median(times['before']):8.2f} ms"
                f" {statistics.median(times['after']):7.2f} ms {ratio:13.2f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--before", required=True, help="python of the install to compare against")
    parser.add_argument(
        "--after", default=sys.executable, help="python of the install measured (this one)"
    )
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--reads", type=int, default=200, help="queries per depth and query model")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory() as directory:
        args.home = Path(directory)
        before_process, before_url = spawn(args.before, args.home / "before")
        try:
            after_process, after_url = spawn(args.after, args.home / "after")
            try:
                with (
                    Client(
                        before_url, timeout=600, api_key=read_key_file(args.home / "before")
                    ) as before,
                    Client(
                        after_url, timeout=600, api_key=read_key_file(args.home / "after")
                    ) as after,
                ):
                    compare(before, after, rows, args)
            finally:
                after_process.terminate()
                after_process.wait(60)
        finally:
            before_process.terminate()
            before_process.wait(60)


if __name__ == "__main__":
    main()
