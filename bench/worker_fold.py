"""The fold as the workers run it, in this process: log entries of commit messages folded
in chunks of `--chunk` (`fold_entries`, as the fold job and the API read the log), half of
them before the state becomes a snapshot's base, half after; then (on an older checkout)
the seal its fold job did before it published, and the time of a full snapshot and of a
delta of the second half. Medians of `--rounds` for the encodes; the state's content hash to compare
two versions side by side (run each with its own checkout's packages first on the path):

    .venv/bin/python bench/worker_fold.py ../shared/data/corpus_en.jsonl --notes 60000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from skeleton import (  # bench/ is on sys.path when a script here runs
    authored_notes,
    load_corpus,
    with_feedback,
)
from snapshots import timed

from assocmem.engine.events.envelope import encode_event
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash, dump_state
from assocmem.engine.snapshot.delta import encode_delta
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import warm_up
from assocmem.workers.state.rebuild import fold_entries


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=60_000)
    parser.add_argument("--chunk", type=int, default=1000, help="entries read from the log at once")
    parser.add_argument("--feedback-every", type=int, default=0, help="as in bench/engine.py")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warm_up()
    rows = load_corpus(args.corpus, args.notes)
    events = authored_notes(rows)
    if args.feedback_every:
        events = with_feedback(events, args.feedback_every)
    entries = [(Position(1000 + n, 0), encode_event(e)) for n, e in enumerate(events)]
    half = len(entries) // 2

    def chunks(start: int, end: int) -> list[list[tuple[Position, bytes]]]:
        return [entries[at : min(at + args.chunk, end)] for at in range(start, end, args.chunk)]

    state = State()
    start = time.perf_counter()
    fold_entries(state, chunks(0, half))
    state.mark_base()
    fold_entries(state, chunks(half, len(entries)))
    folded = time.perf_counter() - start
    start = time.perf_counter()
    if hasattr(state, "seal"):  # an older checkout keeps folded rows as objects till a seal
        state.seal()
    sealed = time.perf_counter() - start
    full, _ = timed(lambda: dump_state(state), args.rounds)
    delta, _ = timed(lambda: encode_delta(state), args.rounds)
    print(
        f"fold of {len(entries):,} events in chunks of {args.chunk:,}:"
        f" {len(entries) / folded:,.0f} events/s; seal {sealed:.2f} s"
    )
    print(
        f"full snapshot {full:.2f} s, delta of {len(entries) - half:,} events {delta:.2f} s;"
        f" hash {content_hash(state)[:16]}"
    )


if __name__ == "__main__":
    main()
