"""replay --verify as a job on a kept data directory (`bench/history_scale.py --keep DIR`):
its time and the peak RSS of each process of the pipeline (issue 16: at most 30 s at a
million events).

Starts `assocmem up` on the directory, times it to the first read answered (a cold
start), runs the replay job `--runs` times, and stops the pipeline. Two versions compare by running this beside
each other in turns, each with its own checkout's packages first on the path (the
pipeline's processes inherit PYTHONPATH): on this shared VM one replay of a million
events took from 84 to 122 s from run to run.

    .venv/bin/python bench/replay_job.py /tmp/kept/data
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from cold_start import first_read  # bench/ is on sys.path when a script here runs
from history_scale import drain, job_seconds  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def peak_rss_mb(parent: int) -> dict[str, int]:
    """VmHWM of each child of `parent`, by its command line."""
    peaks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # it ended meanwhile
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["PPid"]) == parent:
            peaks[command.strip()[-40:]] = int(fields["VmHWM"].split()[0]) // 1024
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("home", type=Path, help="a data directory history_scale.py kept")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--concept", default="fix", help="what the first read asks for")
    args = parser.parse_args()
    if not (args.home / "redis").is_dir():
        parser.error(f"{args.home} holds no pipeline's data (no redis/ in it)")
    start = time.perf_counter()
    process, banner = spawn_up(args.home, UNLIMITED, timeout=600)
    drain(process)
    try:
        up = time.perf_counter() - start
        key = read_key_file(args.home) or ""
        ready = up + first_read(banner_url(banner), key, [args.concept], 600)
        print(f"cold start: banner after {up:.2f} s, first read {ready:.2f} s after starting")
        time.sleep(5)  # the workers' first fold after a start
        with Client(banner_url(banner), timeout=1800, api_key=key) as client:
            for _ in range(args.runs):
                took, result = job_seconds(client, client.start_replay())
                print(f"replay --verify job: {took:.2f} s, matches: {result.get('matches')}")
        for command, peak in sorted(peak_rss_mb(process.pid).items()):
            print(f"peak RSS {peak:,} MB: {command}")
    finally:
        process.terminate()
        process.wait(120)


if __name__ == "__main__":
    main()
