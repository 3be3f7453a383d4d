"""The work each read does, in instructions counted by callgrind: our own tail, apart from the machine's.

On a shared VM a wall-clock p95 mostly measures the machine: bench/recall.py
shows a plain health check missing p95 <= 3x p50 too. Instructions do not
stall. valgrind's callgrind counts the same number for the same read whatever
else the machine does, so the spread of instructions per read is the spread of
the work itself: the tail our code would have on a machine that runs it when
asked.

What is counted per read is what the API does for one (the engine's recall,
the response view, orjson), on the same 50,000-commit state as bench/recall.py,
with its first --reads queries in the same order (a warm-up of 30 deep reads
per query model, then fast, standard, deep). Not counted: HTTP and the client,
about the same for every read, which only brings p95/p50 closer to 1;
bench/http_work.py counts the whole request, both ends.

    .venv/bin/python bench/work.py ../shared/data/corpus_en.jsonl --notes 50000 --reads 100

The state is built natively (extraction and fold, a few minutes), then a child
process loads its snapshot uninstrumented (3 minutes at 50,000 memories) and
runs the reads under callgrind, each followed by a dump of the counts: 1 to 4
seconds a read, some 15 minutes per query model (--modes) at --reads 100.
Needs valgrind (Debian package `valgrind`).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
from recall import DEPTHS, MODES, queries  # bench/ is on sys.path when a script here runs
from skeleton import load_corpus, written_event

from assocmem.api.http import responses
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.recall.time_window import Window
from assocmem.engine.snapshot.codec import dump_state, load_state
from assocmem.engine.text.extraction import extract_concepts
from assocmem.workers.app.results import Read
from assocmem.workers.runtime.native_threads import limit_native_threads

WARM_UP = 30
"""Deep reads before each query model's rows, as bench/recall.py does."""
MARKER = "getppid"
"""The C function called between reads: callgrind dumps its counts each time it is entered."""


def build(corpus: Path, notes: int, reads: int, seed: int, modes: list[str], workdir: Path) -> dict:
    """Extract and fold `notes` commits natively; write the snapshot and the reads to run."""
    rows = load_corpus(corpus, notes)
    events, written = [], []
    start = time.perf_counter()
    for n, row in enumerate(rows):
        event = written_event(row["text"][:2000], float(row["ts"]), n)
        events.append(event)
        written.append(
            {
                "id": str(event.position),
                "concepts": event.data["concepts"],
                "tiers": event.data["tiers"],
            }
        )
        if (n + 1) % 10_000 == 0:
            print(f"  extracted {n + 1:,} ({(n + 1) / (time.perf_counter() - start):,.0f}/s)")
    state = fold_from_zero(events)
    (workdir / "state.bin").write_bytes(dump_state(state))
    now = max(float(r["ts"]) for r in rows)
    plan = []
    for mode in modes:
        picked = [
            list(extract_concepts(text)) for _, text in queries(rows, written, reads, mode, seed)
        ]
        plan.append({"mode": mode, "depth": "warm-up", "queries": picked[:WARM_UP]})
        plan += [{"mode": mode, "depth": depth, "queries": picked} for depth in DEPTHS]
    (workdir / "plan.json").write_bytes(orjson.dumps({"now": now, "rows": plan}))
    return {"now": now, "rows": plan}


def measure(workdir: Path) -> None:
    """The child under callgrind: load the snapshot, then one marker call after every read."""
    limit_native_threads()  # as the API does
    state = load_state((workdir / "state.bin").read_bytes())
    gc.collect()
    gc.freeze()  # as the API does after loading: the state is never walked by the collector
    plan = orjson.loads((workdir / "plan.json").read_bytes())
    (workdir / "loaded").touch()
    while not (workdir / "counting").exists():  # the parent switches instrumentation on
        time.sleep(0.2)
    os.getppid()
    for row in plan["rows"]:
        depth = "deep" if row["depth"] == "warm-up" else row["depth"]
        for concepts in row["queries"]:
            result = recall(state, Query(tuple(concepts), depth=depth, now=plan["now"]))
            orjson.dumps(responses.read_view(Read(result, Window(None), None)))
            os.getppid()


def instructions(dump: Path) -> int:
    match = re.search(rb"^(?:summary|totals): (\d+)", dump.read_bytes(), re.MULTILINE)
    if match is None:
        raise ValueError(f"{dump} has no summary line: not a callgrind dump")
    return int(match.group(1))


def run_child(workdir: Path) -> list[int]:
    """Instructions per read, in the plan's order."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",  # the load is not counted, and runs several times faster so
        f"--dump-before={MARKER}",
        "--dump-line=no",
        f"--callgrind-out-file={workdir}/callgrind.out",
        sys.executable,
        __file__,
        "--measure",
        str(workdir),
    ]
    start = time.perf_counter()
    with subprocess.Popen(command, stderr=subprocess.DEVNULL) as child:
        while not (workdir / "loaded").exists():
            if child.poll() is not None:
                raise SystemExit(f"the child under valgrind exited with {child.returncode}")
            time.sleep(1.0)
        print(f"snapshot loaded under valgrind in {time.perf_counter() - start:.0f} s; counting")
        subprocess.run(
            ["callgrind_control", "--instr=on", str(child.pid)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (workdir / "counting").touch()
        if child.wait() != 0:
            raise SystemExit(f"the child under valgrind exited with {child.returncode}")
    print(f"callgrind run: {time.perf_counter() - start:.0f} s")
    dumps = sorted(workdir.glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
    counts = [instructions(d) for d in dumps]
    # callgrind.out.1 runs up to the first marker, callgrind.out.<k + 1> is read k; the exit
    # goes to callgrind.out itself.
    return counts[1:]


def report(plan: dict, counts: list[int]) -> None:
    expected = sum(len(r["queries"]) for r in plan["rows"])
    if len(counts) != expected:
        raise SystemExit(
            f"{len(counts)} dumps for {expected} reads: the marker was not hit once per read"
        )
    at = 0
    for row in plan["rows"]:
        size = len(row["queries"])
        sample = np.array(counts[at : at + size], dtype=np.float64) / 1e6
        at += size
        if row["depth"] == "warm-up":
            continue
        p50, p95 = np.percentile(sample, 50), np.percentile(sample, 95)
        print(
            f"{row['mode']:<14} {row['depth']:<8} instructions per read: p50 {p50:6.2f} M"
            f"  p95 {p95:6.2f} M  max {sample.max():6.2f} M  p95/p50 {p95 / p50:4.2f}"
        )


def require_corpus_and_valgrind(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.corpus is None:
        parser.error("the corpus path is required")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")


def callgrind_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of the benchmarks that count reads under callgrind (this one, http_work.py)."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, nargs="?", help="corpus_en.jsonl")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--reads", type=int, default=100, help="queries per depth and mode")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=MODES,
        default=list(MODES),
        help="query models to run (each is a third of the run's time)",
    )
    return parser


def main() -> None:
    parser = callgrind_parser(__doc__)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    require_corpus_and_valgrind(parser, args)
    with tempfile.TemporaryDirectory(prefix="assocmem-work-") as tmp:
        workdir = Path(tmp)
        plan = build(args.corpus, args.notes, args.reads, args.seed, args.modes, workdir)
        report(plan, run_child(workdir))


if __name__ == "__main__":
    main()
