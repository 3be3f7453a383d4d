"""Archive segments on real commit messages: how small they get and how fast they are
written and read back (what a replay through the archive pays to decompress).

    .venv/bin/python bench/archive.py ../shared/data/corpus_en.jsonl --notes 60000
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from skeleton import load_corpus, written_event

from assocmem.engine.events.envelope import encode_event
from assocmem.workers.jobs.archive_job import SEGMENT_ENTRIES
from assocmem.workers.store.archive import decode_segment, encode_segment


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (the median is shown)")
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    start = time.perf_counter()
    entries = [
        (event.position, encode_event(event))
        for n, row in enumerate(rows)
        if (event := written_event(row["text"][:2000], float(row["ts"]), n)).position
    ]
    print(f"{len(entries):,} memory.written envelopes built in {time.perf_counter() - start:.0f} s")
    chunks = [entries[i : i + SEGMENT_ENTRIES] for i in range(0, len(entries), SEGMENT_ENTRIES)]
    writes, reads = [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        segments = [encode_segment(chunk) for chunk in chunks]
        writes.append(time.perf_counter() - start)
        start = time.perf_counter()
        back = [e for segment, blob in segments for e in decode_segment(segment, blob)]
        reads.append(time.perf_counter() - start)
        assert back == entries
    raw = sum(s.raw_size for s, _ in segments)
    stored = sum(s.size for s, _ in segments)
    write, read = statistics.median(writes), statistics.median(reads)
    print(
        f"{len(segments)} segments of up to {SEGMENT_ENTRIES:,} entries: {raw / 1e6:.1f} MB stored as"
        f" {stored / 1e6:.1f} MB ({raw / stored:.1f}x smaller)"
    )
    print(
        f"median of {args.rounds}: written at {len(entries) / write:,.0f} entries/s"
        f" ({raw / write / 1e6:.0f} MB/s), read back at {len(entries) / read:,.0f} entries/s"
    )


if __name__ == "__main__":
    main()
