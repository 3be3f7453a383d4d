"""The engine alone, in this process: concept extraction (texts/s) and decode + fold of the
resulting log from zero (events/s, with Python's garbage collector on and paused as the
workers run it), medians of `--rounds`, and the state's content hash.

Run it with another checkout's interpreter to compare two versions side by side on the
same machine (the hash must agree):

    .venv/bin/python bench/engine.py ../shared/data/corpus_en.jsonl --notes 20000
    /path/to/other/.venv/bin/python bench/engine.py ../shared/data/corpus_en.jsonl --notes 20000
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

from skeleton import (  # bench/ is on sys.path when a script here runs
    authored_notes,
    load_corpus,
    with_feedback,
)

from assocmem.engine.events.envelope import decode_event, encode_event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.text.extraction import extract, warm_up


def rate(count: int, run: object, rounds: int) -> float:
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        seconds.append(time.perf_counter() - start)
    return count / statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--feedback-every",
        type=int,
        default=0,
        help="N: after every N-1 notes a feedback on the last one's first two concepts",
    )
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    texts = [row["text"] for row in rows]
    warm_up()
    extracting = rate(len(texts), lambda: [extract(t) for t in texts], args.rounds)
    events = authored_notes(rows)
    if args.feedback_every:
        events = with_feedback(events, args.feedback_every)
    raws = [encode_event(e) for e in events]
    positions = [Position(1000 + n, 0) for n in range(len(raws))]
    folded: list[object] = []

    def fold() -> None:
        state = fold_from_zero(decode_event(r, p) for r, p in zip(raws, positions, strict=True))
        state.counts.matrix()
        folded[:] = [state]

    gc_on = rate(len(raws), fold, args.rounds)
    gc.disable()
    gc_paused = rate(len(raws), fold, args.rounds)
    gc.enable()
    print(f"extraction of {len(texts):,} texts: {extracting:,.0f} texts/s")
    print(
        f"decode + fold from zero of {len(raws):,} events: {gc_on:,.0f} events/s,"
        f" {gc_paused:,.0f} with the collector paused; hash {content_hash(folded[0])[:16]}"
    )


if __name__ == "__main__":
    main()
