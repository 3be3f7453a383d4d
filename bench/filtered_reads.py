"""Filtered reads against unfiltered ones at the same state, in the engine (recall alone).

Commit messages are written with metadata (`author`, a string; `year`, a number; `fix`, a
boolean: whether the subject says fix), then each question (the subject line of a random
commit, read as the API reads text) is asked without a filter and with each filter, in
turns, the order swapped every question. Per filter: how many memories pass it, the
median read time of both, and the median of the per-question ratios filtered/unfiltered
(the figure to quote on a shared machine).

    .venv/bin/python bench/filtered_reads.py ../shared/data/corpus_en.jsonl --notes 50000
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skeleton import load_corpus, written_event

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.filter_index import filter_index
from assocmem.engine.recall.filters import parse_filters, passed
from assocmem.engine.recall.question import read_query
from assocmem.engine.recall.recall import recall
from assocmem.engine.state.state import State


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=50_000, help="newest commits written")
    parser.add_argument("--reads", type=int, default=300, help="questions asked")
    parser.add_argument("--depth", default="standard", choices=("fast", "standard", "deep"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    rows = load_corpus(args.corpus, args.notes)[::-1]
    events = []
    start = time.perf_counter()
    for n, row in enumerate(rows):
        event = written_event(f"{row['author']}: {row['text'][:2000]}", float(row["ts"]), n)
        subject = row["text"].strip().splitlines()[0].lower() if row["text"].strip() else ""
        event.data["metadata"] = {
            "author": row["author"],
            "year": datetime.fromtimestamp(row["ts"], UTC).year,
            "fix": "fix" in subject,
        }
        events.append(event)
        if (n + 1) % 10_000 == 0:
            print(f"  extracted {n + 1:,} of {len(rows):,}", flush=True)
    state = fold_from_zero(events)
    print(f"{len(rows):,} memories folded in {time.perf_counter() - start:.0f} s")

    authors = Counter(row["author"] for row in rows)
    common, _ = authors.most_common(1)[0]
    rare = next(a for a, n in reversed(authors.most_common()) if n >= 3)
    years = Counter(datetime.fromtimestamp(row["ts"], UTC).year for row in rows)
    recent = max(years)
    filters = {
        f"author = the most frequent ({common})": {"author": common},
        f"author = one of 3 notes ({rare})": {"author": rare},
        f"year >= {recent - 1}": {"year": {"gte": recent - 1}},
        "fix = true": {"fix": True},
        f"OR: author = {common}, year = {recent}": {"OR": [{"author": common}, {"year": recent}]},
    }
    indexing = _timed(lambda: filter_index(state))
    passing = {label: count_passing(state, spec) for label, spec in filters.items()}

    now = datetime.fromtimestamp(max(row["ts"] for row in rows), UTC)
    chooser = random.Random(args.seed)
    questions = []
    while len(questions) < args.reads:
        text = chooser.choice(rows)["text"].strip().splitlines()
        query = read_query(text[0], now, depth=args.depth) if text else None
        if query is not None:
            questions.append(query)

    print(f"indexing the metadata and fields of {len(rows):,} memories: {indexing * 1e3:.0f} ms")
    print(f"\n{args.reads} questions at depth {args.depth} (subject lines of random commits)")
    print(f"{'filter':<48} {'pass':>7} {'p50 off':>9} {'p50 on':>9} {'ratio p50':>10}")
    for label, spec in filters.items():
        parsed = parse_filters(spec)
        off, on, ratios = [], [], []
        for n, query in enumerate(questions):
            narrowed = dataclasses.replace(query, filters=parsed)
            plain = lambda q=query: recall(state, q)  # noqa: E731
            filtered = lambda q=narrowed: recall(state, q)  # noqa: E731
            pair = (plain, filtered) if n % 2 == 0 else (filtered, plain)
            timings = [_timed(read) for read in pair]
            a, b = timings if n % 2 == 0 else timings[::-1]
            off.append(a)
            on.append(b)
            ratios.append(b / a)
        print(
            f"{label[:48]:<48} {passing[label]:>7,} {statistics.median(off) * 1e3:>7.2f}ms"
            f" {statistics.median(on) * 1e3:>7.2f}ms {statistics.median(ratios):>9.2f}x"
        )


def _timed(read: Callable[[], object]) -> float:
    start = time.perf_counter()
    read()
    return time.perf_counter() - start


def count_passing(state: State, spec: dict[str, Any]) -> int:
    parsed = parse_filters(spec)
    assert parsed is not None
    return int(passed(state, parsed).sum())


if __name__ == "__main__":
    main()
