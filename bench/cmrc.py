"""Chinese recall on CMRC 2018 at sentence level, next to a BM25 baseline, in one script.

Every sentence of every paragraph is a memory; every question is a read, through the
read path the API runs (time expressions parsed, question words dropped); the target is
the sentence holding the answer. R@k = the target among the first k. Both systems see the
same sentences; BM25 (bm25s, Lucene's variant) ranks over jieba tokens of each sentence,
assocmem over its extracted concepts (the same extraction the API runs at append time),
through the pure engine. Pairs are reported with a bootstrap interval of the difference;
so is time parsing on against off.

`--feedback`: the questions split in two by a seeded hash, the answers of one half rated
helpful (with `--unhelpful`, the other memories their reads returned rated unhelpful),
R@5 of each depth before and after: for the rated questions themselves, for the
other half, and for those of it whose answers no rating touched (the questions of one
paragraph share its subject, as the questions of one conversation do); where the answers
of those a read still misses sit (in a rated memory's paragraph, behind rated memories);
then the same without the learned concept links (valence and the links between memories
only).

`--sessions`: each paragraph is written as a session of its own, as the turns of one
conversation are, so that its sentences are one stream and no other paragraph's.

    .venv/bin/python bench/cmrc.py ../shared/data/zh/cmrc2018_trial.json [--sessions] [--feedback [--unhelpful]]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import jieba
import numpy as np
import orjson
from retrieval import (
    Bm25,
    Question,
    ask,
    build_state,
    describe,
    hits,
    paired,
    rate,
    seeded_half,
    transfer_room,
)

from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import CHINESE_STOP_WORDS

_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]?")
NOW = 1_700_000_000.0
"""The reads' clock (2023-11-14); every sentence is written a year before it."""
WRITTEN = NOW - 365 * 86_400.0


def sentences_and_questions(path: Path) -> tuple[list[str], list[tuple[str, int]]]:
    data = orjson.loads(path.read_bytes())["data"]
    sentences: list[str] = []
    questions: list[tuple[str, int]] = []
    for article in data:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            spans = []
            for match in _SENTENCE.finditer(context):
                if match.group(0).strip():
                    spans.append((match.start(), match.end(), len(sentences)))
                    sentences.append(match.group(0).strip())
            for qa in paragraph["qas"]:
                start = qa["answers"][0]["answer_start"]
                target = next((n for s, e, n in spans if s <= start < e), None)
                if target is not None:
                    questions.append((qa["question"], target))
    return sentences, questions


def paragraph_of(path: Path) -> list[int]:
    """Per sentence, in the order `sentences_and_questions` reads them, its paragraph."""
    streams: list[int] = []
    number = 0
    for article in orjson.loads(path.read_bytes())["data"]:
        for paragraph in article["paragraphs"]:
            for match in _SENTENCE.finditer(paragraph["context"]):
                if match.group(0).strip():
                    streams.append(number)
            number += 1
    return streams


def tokens(text: str) -> list[str]:
    return [w for w in jieba.lcut(text) if w.strip() and w not in CHINESE_STOP_WORDS]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, help="cmrc2018_trial.json or _dev.json (SQuAD format)")
    parser.add_argument("--feedback", action="store_true", help="the feedback protocol instead")
    parser.add_argument("--seed", type=int, default=7, help="of the split into rated and held out")
    parser.add_argument(
        "--sessions",
        action="store_true",
        help="each paragraph written as a session of its own (a conversation), not all in one",
    )
    parser.add_argument(
        "--unhelpful",
        action="store_true",
        help="with --feedback: the other memories each rated read returned rated unhelpful too",
    )
    args = parser.parse_args()
    sentences, pairs = sentences_and_questions(args.data)
    print(f"{len(sentences):,} sentences, {len(pairs):,} questions")
    paragraphs = paragraph_of(args.data)
    sessions = [f"p{n}" for n in paragraphs] if args.sessions else None
    state = build_state(sentences, [WRITTEN] * len(sentences), progress=False, sessions=sessions)
    questions = [Question(text, frozenset({target}), NOW) for text, target in pairs]
    if args.feedback:
        feedback(state, questions, args.seed, paragraphs, args.unhelpful)
        return
    bm25 = Bm25(sentences, tokens)
    for k in (1, 5):
        baseline = [hits(q.answers, bm25.ask(q, k), k) for q in questions]
        for depth in ("fast", "standard", "deep"):
            start = time.perf_counter()
            scores = [hits(q.answers, ask(state, q, depth, k), k) for q in questions]
            elapsed = (time.perf_counter() - start) / len(questions) * 1000
            label = f"R@{k} {depth}, time parsing on"
            print(describe(label, paired(baseline, scores), ("BM25", "assocmem")), end="")
            print(f"  engine {elapsed:.2f} ms/read")
        timeless = [
            hits(q.answers, ask(state, q, "standard", k, auto_time=False), k) for q in questions
        ]
        on = [hits(q.answers, ask(state, q, "standard", k), k) for q in questions]
        print(describe(f"R@{k} standard, time off vs on", paired(timeless, on), ("off", "on")))
        alone = [hits(q.answers, ask(state, q, "standard", k, context=False), k) for q in questions]
        print(describe(f"R@{k} standard, context off vs on", paired(alone, on), ("off", "on")))
    dated = [q for q in questions if np.any([c.isdigit() for c in q.text])]
    print(f"({len(dated)} questions carry a digit, e.g. a year)")


def feedback(
    state: State,
    questions: list[Question],
    seed: int,
    paragraphs: list[int],
    unhelpful: bool = False,
    k: int = 5,
) -> None:
    rated_half = [q for q in questions if seeded_half(q.text, seed) == 0]
    held = [q for q in questions if seeded_half(q.text, seed) == 1]
    depths = ("fast", "standard", "deep")

    def scores(group: list[Question]) -> dict[str, list[float]]:
        return {d: [hits(q.answers, ask(state, q, d, k), k) for q in group] for d in depths}

    before_rated, before_held = scores(rated_half), scores(held)
    rated = set(rate(state, rated_half, NOW, unhelpful=unhelpful))
    untouched = [n for n, q in enumerate(held) if not q.answers & rated]
    shown = ", the other memories shown unhelpful" if unhelpful else ""
    print(
        f"{len(rated_half)} questions rated (their answers helpful{shown}), {len(held)} held out,"
        f" {len(untouched)} of them with answers no rating touched"
    )

    def report(label: str, depths: tuple[str, ...]) -> None:
        after_rated, after_held = scores(rated_half), scores(held)
        for d in depths:
            for name, first, second in (
                ("rated", before_rated[d], after_rated[d]),
                ("held out", before_held[d], after_held[d]),
                (
                    "untouched",
                    [before_held[d][n] for n in untouched],
                    [after_held[d][n] for n in untouched],
                ),
            ):
                result = paired(first, second)
                print(describe(f"  R@{k} {d}{label}, {name}", result, ("before", "after")))

    report("", depths)
    print(transfer_room(state, held, before_held["standard"], untouched, rated, paragraphs, k))
    state.learned = {}
    state.learned_version += 1
    report(" without learned links", ("standard",))


if __name__ == "__main__":
    main()
