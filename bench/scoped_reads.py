"""Reads in a scope, in this process: `--notes` commit messages, each about its author (a
user of the tenant), then reads of 2 concepts of a random commit, as an admin (every link,
every memory) and as the commit's author (the author's and the common memories and links:
engine/state/visibility.py, engine/state/scoped_links.py). p50 and p95 of each, side by side.

Run it with another checkout's interpreter to compare two versions on the same machine:

    .venv/bin/python bench/scoped_reads.py ../shared/data/corpus_en.jsonl --notes 20000
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.events.memory_written import build
from assocmem.engine.position import Position
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.state.state import State
from assocmem.engine.state.visibility import Visibility
from assocmem.engine.text.extraction import extract, warm_up

try:
    from assocmem.engine.state.scoped_links import links_view
except ImportError:  # a checkout from before links were kept apart

    def links_view(state: State, visibility: Visibility) -> State:
        return state


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--reads", type=int, default=300)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    warm_up()
    events = [
        Event(
            "memory.written",
            "default",
            "agent",
            float(row["ts"]),
            build(row["text"], extract(row["text"]), 3),
            position=Position(1000 + n, 0),
            user=row["author"],
        )
        for n, row in enumerate(rows)
    ]
    state = fold_from_zero(events)
    state.counts.matrix()
    rng = random.Random(7)
    picks = [rng.randrange(len(rows)) for _ in range(args.reads)]
    print(f"{len(state.rows):,} memories about {len({r['author'] for r in rows}):,} users")
    readers: list[tuple[str, Callable[[int], Visibility]]] = [
        ("admin", lambda n: Visibility(everything=True)),
        ("the author", lambda n: Visibility(user=rows[n]["author"])),
    ]
    for name, reader in readers:
        read_all(state, events, picks, reader)  # warm
        p50, p95 = read_all(state, events, picks, reader)
        print(f"  as {name}: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


def read_all(
    state: State, events: list[Event], picks: list[int], reader: Callable[[int], Visibility]
) -> tuple[float, float]:
    seconds = []
    for n in picks:
        visibility = reader(n)
        query = Query(tuple(events[n].data["concepts"][:2]), visibility=visibility)
        start = time.perf_counter()
        recall(links_view(state, visibility), query)
        seconds.append(time.perf_counter() - start)
    seconds.sort()
    return statistics.median(seconds) * 1000, seconds[int(len(seconds) * 0.95)] * 1000


if __name__ == "__main__":
    main()
