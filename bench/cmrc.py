"""Chinese recall on CMRC 2018 at sentence level, next to a BM25 baseline, in one script.

Every sentence of every paragraph is a memory; every question is a read; the
target is the sentence holding the answer. R@k = the target among the first k.
Both systems see the same sentences; BM25 (rank_bm25's Okapi) ranks over
jieba tokens of each sentence, assocmem over its extracted concepts (the same
extraction the API runs at append time), through the pure engine.

    .venv/bin/python bench/cmrc.py ../shared/data/zh/cmrc2018_trial.json
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import jieba
import numpy as np
import orjson
from rank_bm25 import BM25Okapi
from skeleton import written_event  # bench/ is on sys.path when a script here runs

from assocmem.engine.extraction import CHINESE_STOP_WORDS, extract_concepts
from assocmem.engine.fold import fold_from_zero
from assocmem.engine.recall import Query, recall

_SENTENCE = re.compile(r"[^。！？!?]+[。！？!?]?")


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


def tokens(text: str) -> list[str]:
    return [
        w
        for w in jieba.lcut(text)
        if w.strip() and w not in CHINESE_STOP_WORDS and len(w.strip()) > 0
    ]


def recall_at(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r < k) / len(ranks)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, help="cmrc2018_trial.json (SQuAD format)")
    args = parser.parse_args()
    sentences, questions = sentences_and_questions(args.data)
    print(f"{len(sentences):,} sentences, {len(questions):,} questions")

    bm25 = BM25Okapi([tokens(s) for s in sentences])
    bm25_ranks: list[int | None] = []
    for question, target in questions:
        scores = bm25.get_scores(tokens(question))
        order = np.argsort(-scores, kind="stable")[:5]
        bm25_ranks.append(next((r for r, n in enumerate(order) if n == target), None))

    state = fold_from_zero(written_event(text, 0.0, n) for n, text in enumerate(sentences))
    print(
        f"BM25 (jieba tokens)     R@1 {recall_at(bm25_ranks, 1):.3f}  R@5 {recall_at(bm25_ranks, 5):.3f}"
    )
    for depth in ("fast", "standard", "deep"):
        ranks: list[int | None] = []
        latencies = []
        for question, target in questions:
            concepts = extract_concepts(question)
            if not concepts:
                ranks.append(None)
                continue
            start = time.perf_counter()
            result = recall(state, Query(concepts, depth=depth, limit=5, now=0.0))
            latencies.append((time.perf_counter() - start) * 1000)
            ids = [int(item.memory.id.split("-")[0]) - 1 for item in result.items]
            ranks.append(next((r for r, n in enumerate(ids) if n == target), None))
        print(
            f"assocmem {depth:<8}       R@1 {recall_at(ranks, 1):.3f}  R@5 {recall_at(ranks, 5):.3f}"
            f"  (engine p50 {np.percentile(latencies, 50):.2f} ms)"
        )


if __name__ == "__main__":
    main()
