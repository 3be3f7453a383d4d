"""Cold start: a new `assocmem up` on a data directory that holds `--notes` commit messages,
to its banner and to the first read answered (issue 16: at most 1 s at 50,000 memories).

Writes the notes through HTTP, waits until the workers have published the last snapshot,
stops the pipeline, then starts it again `--restarts` times on the same directory and
times each start: medians, and each run's figures.

    .venv/bin/python bench/cold_start.py ../shared/data/corpus_en.jsonl --notes 50000
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from pathlib import Path

from recall import wait_for_snapshot, write_all  # bench/ is on sys.path when a script here runs
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.errors import ApiError
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def bytecode_missing() -> bool:
    """Whether our modules have no bytecode beside them: every process of the pipeline then
    compiles them at its start (about 0.2 s of a cold start here), which an install made by
    pip or `make install` does not (PYTHONDONTWRITEBYTECODE keeps Python from writing it)."""
    import assocmem.engine.state.state

    return not Path(importlib.util.cache_from_source(assocmem.engine.state.state.__file__)).exists()


def first_read(url: str, key: str, concepts: list[str], timeout: float = 120.0) -> float:
    """Seconds until a read is answered with items (None of it failing counts as an answer)."""
    start = time.perf_counter()
    with Client(url, timeout=timeout, api_key=key) as client:
        while time.perf_counter() - start < timeout:
            try:
                if client.read(concepts=concepts)["items"]:
                    return time.perf_counter() - start
            except ApiError:
                pass
            time.sleep(0.01)
    raise SystemExit(f"no read answered within {timeout:.0f} s")


def restart(home: Path, concepts: list[str]) -> tuple[float, float, str]:
    """(seconds to the banner, seconds from then to the first read, Redis's own word on
    loading its data) of one new `up`."""
    start = time.perf_counter()
    process, banner = spawn_up(home, UNLIMITED)
    try:
        up = time.perf_counter() - start
        read = first_read(banner_url(banner), read_key_file(home) or "", concepts)
        return up, read, redis_load(home)
    finally:
        process.terminate()
        process.wait(60)


def redis_load(home: Path) -> str:
    lines = (home / "redis" / "redis.log").read_text(errors="replace").splitlines()
    loaded = [line.split("* ", 1)[-1] for line in lines if "DB loaded from" in line]
    return loaded[-1] if loaded else "no load reported"


def aof_mb(home: Path) -> float:
    files = (home / "redis" / "appendonlydir").glob("*")
    return sum(path.stat().st_size for path in files) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--restarts", type=int, default=3, help="0: only the write rate")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument(
        "--home",
        type=Path,
        metavar="DIR",
        help="restart the pipeline on this data directory as it is (one kept by"
        " `history_scale.py --keep`), writing nothing",
    )
    parser.add_argument("--concept", default="fix", help="what the first read asks, with --home")
    args = parser.parse_args()
    if args.home is not None:
        restart_kept(args.home, args.restarts, [args.concept])
        return
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory(prefix="assocmem-cold-") as directory:
        home = Path(directory) / "data"
        process, banner = spawn_up(home, UNLIMITED)
        try:
            key = read_key_file(home) or ""
            os.environ["ASSOCMEM_API_KEY"] = key
            with Client(banner_url(banner), timeout=600, api_key=key) as client:
                written = write_all(client, rows, args.batch)
            info = read_run_file(home)
            assert info is not None
            waited = wait_for_snapshot(info.redis_url, written[-1]["position"])
            print(f"workers published the last snapshot {waited:.1f} s after the writes")
        finally:
            process.terminate()
            process.wait(60)
        concepts = [written[len(written) // 2]["concepts"][0]]
        runs = [restart(home, concepts) for _ in range(args.restarts)]
    summarize(runs, f"{len(rows):,} memories")


def restart_kept(home: Path, restarts: int, concepts: list[str]) -> None:
    if not (home / "redis").is_dir():
        raise SystemExit(f"--home {home}: no data directory of assocmem there")
    print(f"{home}: {aof_mb(home):,.0f} MB of AOF")
    summarize([restart(home, concepts) for _ in range(restarts)], str(home))


def summarize(runs: list[tuple[float, float, str]], what: str) -> None:
    if not runs:
        return
    if bytecode_missing():
        print("  (no bytecode for assocmem's modules: each start compiled them; `make install`)")
    for n, (up, read, loaded) in enumerate(runs, start=1):
        print(f"  start {n}: banner after {up:.2f} s, first read {read:.2f} s later ({loaded})")
    ups, reads = [r[0] for r in runs], [r[0] + r[1] for r in runs]
    print(
        f"cold start at {what}: banner p50 {statistics.median(ups):.2f} s,"
        f" first read p50 {statistics.median(reads):.2f} s after starting"
    )


if __name__ == "__main__":
    main()
