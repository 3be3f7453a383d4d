"""History at scale (issue 16): a tenant of `--events` events (1,000,000 by default: the
commit messages of the corpus replayed, one feedback event every `--feedback-every`), then
the time of what people auditing it run, each against the running pipeline through HTTP:

- ingest: each block of 100,000 appends (batches of `--batch` through HTTP), to see that
  the cost per event does not grow with the log (2nd half of 200,000 ≤ 1.2x the 1st);
- `as_of` reads at 50% and 90% of the log, twice each (a rebuild, then the cached one),
  then one a block later (the kept rebuild folded on, unless a snapshot is nearer);
- `audit link` of the link the most feedback taught, through the API's route (from the
  served state's index), then as the job the CLI runs (from the worker's folded state);
- consolidation (`assocmem consolidate --now`), as the queued job, start to end;
- `replay --verify` (a rebuild from zero compared with the served hash), as the job;
- cold start: a new `up` on the data directory, to its first read;
- the RSS of the API and the worker, and the stall meter.

    .venv/bin/python bench/history_scale.py ../shared/data/corpus_en.jsonl --events 1000000
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import tempfile
import threading
import time
from pathlib import Path

import orjson
from cold_start import (  # bench/ is on sys.path when a script here runs
    aof_mb,
    first_read,
    redis_load,
)
from recall import rss_mb, stall_meter, wait_for_snapshot
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.errors import ApiError
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def drain(process) -> None:  # type: ignore[no-untyped-def]
    """Read the pipeline's output so that it never blocks on a full pipe."""
    threading.Thread(target=lambda: process.stdout.read(), daemon=True).start()


def events(rows: list[dict], count: int, feedback_every: int):  # type: ignore[no-untyped-def]
    """(item, concepts of a feedback) for `count` events: the corpus again and again, each pass
    its own idempotency keys; every `feedback_every`-th a feedback on two concepts of the
    last note, which `append` turns into a feedback on that note."""
    span = max(float(r["ts"]) for r in rows) - min(float(r["ts"]) for r in rows)
    made = 0
    for cycle in itertools.count():
        for row in rows:
            if made == count:
                return
            made += 1
            if made % feedback_every == 0:
                yield {"type": "feedback", "outcome": 1.0}
                continue
            ts = float(row["ts"]) - (cycle * span / 50)  # earlier passes a little older
            yield {
                "type": "memory",
                "text": row["text"][:2000],
                "ts": ts,
                "key": f"{cycle}:{row['id']}",
            }


def append(
    client: Client, rows: list[dict], args: argparse.Namespace
) -> tuple[list[float], list[str], dict]:
    """Seconds per block of 100,000 events, the position after each block, and the link the
    most feedback taught (concepts)."""
    blocks, positions, taught = [], [], {}
    last_note: dict | None = None
    batch: list[dict] = []
    start = time.perf_counter()
    sent = 0

    def flush() -> None:
        nonlocal last_note
        answers = client.publish(batch)
        for item, answer in zip(batch, answers, strict=True):
            if item["type"] == "memory" and len(answer.get("concept_keys") or []) >= 2:
                last_note = answer
        batch.clear()

    for item in events(rows, args.events, args.feedback_every):
        if item["type"] == "feedback":
            if last_note is None and batch:
                flush()  # the notes before it, so that it has one to rate (the block counts it)
            if last_note is None:
                continue
            pair = last_note["concepts"][:2]
            item = item | {"ids": [last_note["id"]], "concepts": pair}
            taught[tuple(pair)] = taught.get(tuple(pair), 0) + 1
        batch.append(item)
        sent += 1
        if len(batch) == args.batch:
            flush()
        if sent % args.block == 0:
            if batch:
                flush()
            blocks.append(time.perf_counter() - start)
            positions.append(client.position or "0-0")
            start = time.perf_counter()
            print(f"  {sent:,} events: last {args.block:,} in {blocks[-1]:.1f} s", flush=True)
    if batch:
        flush()
    positions.append(client.position or "0-0")
    return blocks, positions, max(taught, key=taught.get) if taught else ()


def job_seconds(client: Client, job: dict, timeout: float = 3600) -> tuple[float, dict]:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        seen = client.job(job["id"])
        if seen["state"] in ("finished", "failed"):
            if seen["state"] == "failed":
                raise SystemExit(f"job {job['id']} failed: {seen['error']}")
            return time.perf_counter() - start, seen.get("result") or {}
        time.sleep(0.05)
    raise SystemExit(f"job {job['id']} did not finish within {timeout:.0f} s")


def timed(call, *args, **kwargs) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    answer = call(*args, **kwargs)
    return time.perf_counter() - start, answer


def answered(call, *args, **kwargs) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    """Seconds until `call` was answered, asked again while the API answers 503 (a rebuild
    past ASSOCMEM_READ_TIMEOUT goes on in its thread), and how many times it did."""
    start, refused = time.perf_counter(), 0
    while True:
        try:
            call(*args, **kwargs)
            return time.perf_counter() - start, refused
        except ApiError as exc:
            if exc.status != 503:
                raise
            refused += 1


def rungs_on_disk(home: Path) -> str:
    """What the snapshots kept on disk for as-of reads (workers/store/snapshot_rungs.py) hold."""
    index = next(home.glob("snapshot-rungs/*/*/rungs.json"), None)
    if index is None:
        return "snapshots kept on disk: none"
    kept = orjson.loads(index.read_bytes())
    folded = [n for _, n in kept["rungs"]]
    gaps = [b - a for a, b in itertools.pairwise(folded)]
    size = sum(f.stat().st_size for f in index.parent.iterdir())
    return (
        f"snapshots kept on disk: {len(folded)} at most {max(gaps, default=0):,} events apart,"
        f" {len(kept['bases'])} files, {size / 1e6:,.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--feedback-every", type=int, default=50)
    parser.add_argument("--block", type=int, default=100_000, help="events timed together")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="make the data directory DIR (it must not exist) and keep it, for cold starts later"
        " (`bench/cold_start.py --home DIR`)",
    )
    args = parser.parse_args()
    rows = load_corpus(args.corpus)
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep {args.keep}: it exists already")
    with _data_parent(args.keep) as directory:
        home = Path(directory) / "data"
        process, banner = spawn_up(home, UNLIMITED)
        drain(process)
        try:
            key = read_key_file(home) or ""
            info = read_run_file(home)
            assert info is not None
            with Client(banner_url(banner), timeout=1800, api_key=key) as client:
                blocks, positions, link = append(client, rows, args)
                waited = wait_for_snapshot(info.redis_url, client.position or "0-0")
                print(f"workers published the last snapshot {waited:.1f} s after the writes")
                report(client, info, blocks, positions, link)
        finally:
            process.terminate()
            process.wait(120)
        print(rungs_on_disk(home))
        concepts = [link[0]] if link else ["fix"]
        start = time.perf_counter()
        process, banner = spawn_up(home, UNLIMITED, timeout=600)
        drain(process)
        try:
            up = time.perf_counter() - start
            read = first_read(banner_url(banner), read_key_file(home) or "", concepts, 600)
            print(
                f"cold start: banner after {up:.2f} s, first read {up + read:.2f} s after starting"
                f" (Redis: {redis_load(home)}; {aof_mb(home):,.0f} MB of AOF)"
            )
        finally:
            process.terminate()
            process.wait(120)


def _data_parent(keep: Path | None) -> contextlib.AbstractContextManager[str]:
    if keep is None:
        return tempfile.TemporaryDirectory(prefix="assocmem-history-")
    keep.mkdir(parents=True)
    return contextlib.nullcontext(str(keep))


def report(client: Client, info, blocks: list[float], positions: list[str], link: tuple) -> None:  # type: ignore[no-untyped-def]
    if len(blocks) >= 2:
        print(f"ingest: 2nd block / 1st = {blocks[1] / blocks[0]:.2f}x;"
              f" last block / 1st = {blocks[-1] / blocks[0]:.2f}x")  # fmt: skip
    state = client.state()
    print(f"state: {state['memories']:,} memories, {state['concepts']:,} concepts,"
          f" {state['written_links']:,} written links, {state['taught_links']:,} taught")  # fmt: skip
    print(f"RSS: API {rss_mb(info.api_pid):,.0f} MB, worker {rss_mb(info.worker_pids[0]):,.0f} MB")
    lost, longest = stall_meter(5.0)
    print(f"stall meter: {lost:.1%} of 5 s lost, longest gap {longest:.0f} ms")
    query = list(link[:1]) or ["fix"]
    for share in (0.5, 0.9):
        at = max(0, int(len(positions) * share) - 1)
        point, later = positions[at], positions[min(at + 1, len(positions) - 1)]
        (first, refused), (again, _), (step, _) = [
            answered(client.read, concepts=query, as_of=one, record_access=False)
            for one in (point, point, later)
        ]
        print(
            f"as_of read at {share:.0%} of the log ({point}): {first:.2f} s"
            f" ({refused} answers of 503 before it), then {again:.2f} s;"
            f" a block later {step:.2f} s"
        )
    if link:
        took, audit = timed(client.audit_link, *link)
        print(f"audit link {link[0]} - {link[1]}: {took:.2f} s, {len(audit['changes']):,} changes")
        took, result = job_seconds(client, client.start_audit_link(*link))
        print(f"audit link as the job (the CLI's): {took:.2f} s, same: {result == audit}")
    took, result = job_seconds(client, client.consolidate())
    print(f"consolidation job: {took:.2f} s; its report: " + orjson.dumps(
        {k: v for k, v in result.items() if not isinstance(v, (list, dict))}).decode())  # fmt: skip
    took, result = job_seconds(client, client.start_replay())
    print(f"replay --verify job: {took:.2f} s, matches: {result.get('matches')}")
    times = [timed(client.health)[0] for _ in range(20)]
    print(f"health p50 {statistics.median(times) * 1000:.1f} ms (the floor of a request)")


if __name__ == "__main__":
    main()
