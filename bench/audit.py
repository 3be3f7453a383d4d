"""`audit link` in this process: the history of the link the most feedback taught, over a
log of `--notes` commit messages with a feedback every `--feedback-every`, from the
encoded entries as the workers read them (the filter on the entries' bytes, the ratings
among those kept decoded to tell which memories the fold must hold, the decoding of the
other kept ones, the fold of the link's events). Medians of `--rounds`.

    .venv/bin/python bench/audit.py ../shared/data/corpus_en.jsonl --notes 30000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path

from skeleton import (  # bench/ is on sys.path when a script here runs
    authored_notes,
    load_corpus,
    with_feedback,
)

from assocmem.engine.events.envelope import decode_event, encode_event
from assocmem.engine.history.audit import link_filter, link_history, may_rate, rated_memories
from assocmem.engine.position import Position
from assocmem.engine.text.extraction import warm_up


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=30_000)
    parser.add_argument("--feedback-every", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    warm_up()
    notes = authored_notes(rows)
    events = with_feedback(notes, args.feedback_every)
    entries = [(Position(1000 + n, 0), encode_event(e)) for n, e in enumerate(events)]
    taught = Counter(
        tuple(e.data["concepts"]) for e in events if e.type == "feedback.given"
    ).most_common(1)[0][0]
    source, target = taught[0], taught[1]

    def audit() -> int:
        keep = link_filter(source, target)
        kept = [(p, raw) for p, raw in entries if keep(p, raw)]
        ratings = [decode_event(raw, p) for p, raw in kept if may_rate(raw)]
        rated = rated_memories(ratings, source, target)
        decoded = {event.position: event for event in ratings}  # as History.link: once
        events = (decoded.get(p) or decode_event(raw, p) for p, raw in kept)
        return len(link_history(events, source, target, rated).changes)

    seconds, changes = [], 0
    for _ in range(args.rounds):
        start = time.perf_counter()
        changes = audit()
        seconds.append(time.perf_counter() - start)
    print(
        f"audit link {source} -- {target} over {len(entries):,} entries:"
        f" {statistics.median(seconds):.3f} s (median of {args.rounds}), {changes} changes"
    )


if __name__ == "__main__":
    main()
