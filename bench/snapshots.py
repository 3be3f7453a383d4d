"""Publishing a snapshot, full against delta: what the fold job encodes after `--tail` more
notes on a state of `--notes`, and what loading either costs (a delta loads its base too).
Encoded as the worker encodes them, the cyclic collector held (workers/state/heap.py), on a state
frozen as the worker's is; the full snapshot and the content hash also with collections
running, as they ran before.

    .venv/bin/python bench/snapshots.py ../shared/data/corpus_en.jsonl --notes 50000 --tail 1000
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from retrieval import build_state
from skeleton import load_corpus, written_event

from assocmem.engine.events.fold import fold
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.engine.snapshot.delta import encode_delta, load_snapshot
from assocmem.workers.state.heap import collection_held


def timed(work, rounds: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    samples, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def held(work: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with collection_held():
            return work()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--tail", type=int, default=1_000, help="notes folded after the base")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (the median is shown)")
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)[::-1]
    texts = [f"{r['author']}: {r['text'][:2000]}" for r in rows]
    times = [float(r["ts"]) for r in rows]
    head = len(rows) - args.tail
    state = build_state(texts[:head], times[:head])
    base_blob = dump_state(state)
    state.mark_base()
    fold(state, [written_event(texts[n], times[n], n) for n in range(head, len(rows))])
    gc.freeze()  # the worker freezes its state after each fold
    full_time, full_blob = timed(held(lambda: dump_state(state)), args.rounds)
    delta_time, delta_blob = timed(held(lambda: encode_delta(state)), args.rounds)
    full_running = timed(lambda: dump_state(state), args.rounds)[0]
    hash_time = timed(held(lambda: content_hash(state)), args.rounds)[0]
    hash_running = timed(lambda: content_hash(state), args.rounds)[0]
    full_load, loaded = timed(lambda: load_snapshot(full_blob, lambda _: None), args.rounds)
    delta_load, from_delta = timed(
        lambda: load_snapshot(delta_blob, lambda _: base_blob), args.rounds
    )
    assert content_hash(loaded) == content_hash(from_delta) == content_hash(state)
    print(f"{len(rows):,} memories, the last {args.tail:,} after the base; median of {args.rounds}")
    print(f"  publish full:  {full_time * 1000:7.0f} ms, {len(full_blob) / 1e6:6.2f} MB")
    print(
        f"  publish delta: {delta_time * 1000:7.0f} ms, {len(delta_blob) / 1e6:6.2f} MB"
        f"  ({full_time / delta_time:.0f}x faster, {len(full_blob) / len(delta_blob):.0f}x smaller)"
    )
    print(f"  load full: {full_load * 1000:.0f} ms; load base + delta: {delta_load * 1000:.0f} ms")
    print(
        f"  with collections running: publish full {full_running * 1000:.0f} ms;"
        f" content hash {hash_running * 1000:.0f} ms (held: {hash_time * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    main()
