"""Walking-skeleton numbers: HTTP appends/s, read latency, fold throughput from zero."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.events.memory_written import MEMORY_WRITTEN, build
from assocmem.engine.position import ZERO, Position
from assocmem.engine.text.extraction import extract, extract_concepts
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import load_settings
from assocmem.workers.state.rebuild import decode_entries
from assocmem.workers.store.ports import iter_entries


def written_event(text: str, ts: float, n: int) -> Event:
    """The memory.written event the API would append for the n-th note (from 0), in-process:
    concepts extracted, position "n+1-0"."""
    data = MEMORY_WRITTEN.payload(text=text, extraction=extract(text), importance=3)
    return Event(MEMORY_WRITTEN.name, "default", "bench", ts, data, position=Position(n + 1, 0))


def load_corpus(path: Path, limit: int | None = None) -> list[dict]:
    """The first `limit` rows of a JSON-lines corpus (all of them by default)."""
    rows = []
    with path.open("rb") as handle:
        for line in handle:
            rows.append(orjson.loads(line))
            if limit is not None and len(rows) >= limit:
                break
    return rows


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def bench_appends(client: Client, rows: list[dict], singles: int, batch: int) -> None:
    start = time.perf_counter()
    for row in rows[:singles]:
        client.write(row["text"][:2000], ts=row["ts"])
    single_rate = singles / (time.perf_counter() - start)
    rest = rows[singles:]
    start = time.perf_counter()
    for i in range(0, len(rest), batch):
        client.write_many([{"text": r["text"][:2000], "ts": r["ts"]} for r in rest[i : i + batch]])
    batch_rate = len(rest) / (time.perf_counter() - start)
    print(
        f"appends/s through HTTP, one client: single {single_rate:,.0f}/s ({singles} writes); "
        f"batched x{batch} {batch_rate:,.0f}/s ({len(rest)} writes)"
    )


def bench_reads(client: Client, rows: list[dict], reads: int, seed: int) -> None:
    rnd = random.Random(seed)
    queries = []
    while len(queries) < reads:
        concepts = extract_concepts(rnd.choice(rows)["text"])
        if len(concepts) >= 2:
            queries.append(list(rnd.sample(concepts, min(3, len(concepts)))))
    start = time.perf_counter()
    client.read(concepts=queries[0])
    print(
        f"first read after the writes (the replica folds the tail): {time.perf_counter() - start:.2f} s"
    )
    samples = []
    for concepts in queries:
        start = time.perf_counter()
        client.read(concepts=concepts)
        samples.append((time.perf_counter() - start) * 1000)
    print(
        f"read through HTTP at {len(rows):,} notes: p50 {statistics.median(samples):.2f} ms, "
        f"p95 {percentile(samples, 95):.2f} ms ({reads} reads, 2-3 concepts each)"
    )


def bench_fold(redis_url: str) -> None:
    runtime = Runtime.connect(load_settings({"REDIS_URL": redis_url}))
    entries = [e for chunk in iter_entries(runtime.log, "default", ZERO) for e in chunk]
    start = time.perf_counter()
    events, _ = decode_entries(entries)
    state = fold_from_zero(events)
    engine = time.perf_counter() - start
    runtime.snapshots.drop("default")
    start = time.perf_counter()
    fold_and_publish(runtime, "default", force=True)
    job = time.perf_counter() - start
    print(
        f"fold from zero of {len(entries):,} events: engine (decode + fold) {len(entries) / engine:,.0f} events/s; "
        f"whole job (read, fold, snapshot, publish) {len(entries) / job:,.0f} events/s; "
        f"{len(state.concepts):,} concepts"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--singles", type=int, default=1_000, help="writes sent one at a time")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--reads", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory() as home:
        process, banner = spawn_up(Path(home), UNLIMITED)
        os.environ["ASSOCMEM_API_KEY"] = read_key_file(Path(home)) or ""  # the clients send it
        url = banner_url(banner)
        time.sleep(0.5)
        try:
            with Client(url, timeout=300) as client:
                bench_appends(client, rows, args.singles, args.batch)
                bench_reads(client, rows, args.reads, args.seed)
            run = orjson.loads((Path(home) / "run.json").read_bytes())
            bench_fold(run["redis_url"])
        finally:
            process.terminate()
            process.wait(60)


def authored_notes(rows: list[dict]) -> list[Event]:
    """The corpus's commit messages as memory.written events by their authors, oldest first
    (the corpus lists the newest first), concepts extracted in this process."""
    return [
        Event(
            MEMORY_WRITTEN.name,
            "default",
            r["author"],
            float(r["ts"]),
            build(r["text"], extract(r["text"]), 3),
        )
        for r in reversed(rows)
    ]


def with_feedback(notes: list[Event], every: int) -> list[Event]:
    """`notes` with a feedback after every `every - 1`: the last note rated helpful for its
    first two concepts (positions are given in order: note n - 1 is at 1000 + its index)."""
    events: list[Event] = []
    for note in notes:
        events.append(note)
        if len(events) % every == every - 1 and len(note.data["concepts"]) >= 2:
            rated = str(Position(1000 + len(events) - 1, 0))
            data = FEEDBACK_GIVEN.payload(
                memory_ids=[rated], outcome=1.0, concepts=note.data["concepts"][:2]
            )
            events.append(Event("feedback.given", "default", note.agent, note.ts, data))
    return events


if __name__ == "__main__":
    main()
