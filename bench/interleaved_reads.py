"""Reads between writes: what a read costs right after a write, against one after reads only.

An agent that writes and reads in turn never meets the steady state `side_by_side.py`
measures (every note written first, then the reads). This writes `--notes` commits to one
`assocmem up`, waits for the workers' snapshot, then times, through HTTP, `standard` reads:
the first few after the writes, `--rounds` with nothing written between them, and
`--rounds` each right after one note is written.

    .venv/bin/python bench/interleaved_reads.py ../shared/data/corpus_en.jsonl --notes 50000
    .venv/bin/python bench/interleaved_reads.py ... --python /path/to/other/venv/bin/python
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from recall import queries, wait_for_snapshot, wait_until_served, write_all
from side_by_side import spawn, timed_read
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file

FIRST = 5
"""Reads timed one by one right after the batch of writes."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--python", default=sys.executable, help="python of the install measured")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=40, help="reads of each kind timed")
    parser.add_argument("--depth", default="standard", choices=("fast", "standard", "deep"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory) / "home"
        process, url = spawn(args.python, home)
        try:
            with Client(url, timeout=600, api_key=read_key_file(home)) as client:
                measure(client, rows, home, args)
        finally:
            process.terminate()
            process.wait(60)


def measure(client: Client, rows: list[dict], home: Path, args: argparse.Namespace) -> None:
    written = write_all(client, rows, 500)
    wait_until_served(client, written[-1]["position"])
    wait_for_snapshot(read_run_file(home).redis_url, written[-1]["position"])
    now = max(float(r["ts"]) for r in rows)
    texts = [text for _, text in queries(rows, written, FIRST + 2 * args.rounds, "any", args.seed)]

    def read(text: str) -> float:
        return timed_read(client, text, args.depth, now)

    first = [read(text) for text in texts[:FIRST]]
    print("first reads after the writes:", ", ".join(f"{ms:.1f} ms" for ms in first))
    steady = [read(text) for text in texts[FIRST : FIRST + args.rounds]]
    after_write = []
    for n, text in enumerate(texts[FIRST + args.rounds :]):
        client.write(f"an interleaved note {n} on retry timeouts", concepts=["retry", "timeout"])
        after_write.append(read(text))
    for label, times in (("nothing written between", steady), ("right after a write", after_write)):
        print(
            f"{args.depth} reads, {label}: p50 {statistics.median(times):.2f} ms,"
            f" max {max(times):.2f} ms ({len(times)} reads)"
        )


if __name__ == "__main__":
    main()
