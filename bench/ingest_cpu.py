"""Where the CPU of a write burst goes: `--notes` commit messages written through HTTP in
batches of `--batch` to a fresh pipeline (`up`, as `bench/recall.py` writes them), then the
CPU seconds each process of the pipeline used (the API, its extraction helper, the worker,
cron, Redis) and this client's, the rate of the second half of the burst alone (the
first holds the processes' start-up: imports, extraction tables, the helper's spawn) and
how long the first batch took (what a fresh API makes its first writer wait). On a
shared machine the rate moves with the neighbours; the CPU seconds move far less, so two
versions compare better by them (run each with its own checkout's packages first on the
path, alternating):

    .venv/bin/python bench/ingest_cpu.py ../shared/data/corpus_en.jsonl --notes 50000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def children(pid: int) -> list[int]:
    """Every descendant of `pid` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *children(int(child))]
    return found


def role(pid: int) -> str:
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    line = b" ".join(command).decode(errors="replace")
    if "spawn_main" in line or "resource_tracker" in line:
        return "helper"
    if "assocmem" in line:
        return command[-2].decode() if command[-1] == b"" else command[-1].decode()
    return "redis" if "redis" in line else Path(command[0].decode()).name


def cpu_seconds(up: int) -> dict[str, float]:
    """CPU seconds (user + system) of each kind of process under `up`."""
    used: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for pid in children(up):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            name = role(pid)
        except OSError:  # ended meanwhile
            continue
        used[name] = used.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return used


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--settle", type=float, default=4.0, help="seconds for the last fold")
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory(prefix="assocmem-cpu-") as directory:
        home = Path(directory) / "data"
        process, banner = spawn_up(home, UNLIMITED)
        try:
            with Client(banner_url(banner), api_key=read_key_file(home) or "") as client:
                mine, start = time.process_time(), time.perf_counter()
                halfway = (0, start)  # (notes written, when): moved on at the middle batch
                first_batch = 0.0
                for n in range(0, len(rows), args.batch):
                    items = [
                        {"text": r["text"][:2000], "ts": float(r["ts"]), "key": r["id"]}
                        for r in rows[n : n + args.batch]
                    ]
                    sent = time.perf_counter()
                    client.write_many(items)
                    first_batch = first_batch or time.perf_counter() - sent
                    if n < len(rows) // 2 <= n + args.batch:
                        halfway = (n + len(items), time.perf_counter())
                wall = time.perf_counter() - start
                time.sleep(args.settle)  # the worker's last fold and publish
                used = cpu_seconds(process.pid)
                used["client"] = time.process_time() - mine
        finally:
            process.terminate()
            process.wait(60)
    second_half = (len(rows) - halfway[0]) / (start + wall - halfway[1])
    print(
        f"{len(rows):,} notes in batches of {args.batch}: {len(rows) / wall:,.0f}/s"
        f" (the second half alone {second_half:,.0f}/s: the first holds the start-up of the"
        " processes, their imports and extraction tables; the first batch took"
        f" {first_batch * 1000:,.0f} ms);"
        f" CPU s: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(used.items()))
        + f"; total {sum(used.values()):.1f} ({sum(used.values()) / len(rows) * 1e6:,.0f} us a note)"
    )


if __name__ == "__main__":
    main()
