"""Recall where the answer follows the best match: conversations and work sessions, whose
next turn or next step holds the answer while sharing few words with the question.

Two public proxies of long conversations, from text nobody here wrote:

- `cmrc`: every paragraph of CMRC 2018 (trial or dev) is a conversation, its sentences
  the turns in order, a minute apart, one stream per paragraph. A question counts when
  the sentence holding its answer directly follows (or precedes) the sentence that best
  matches the question (BM25 over jieba tokens): the right answer is a neighbour of the
  strongest match, not the match itself.
- `commits`: the commit messages of one author within a few hours of each other are a
  work session, in time order. A question is 2-3 telling words of one commit (the
  known-item query model of Azzopardi et al.), and its answer is the author's next commit
  of the same session: what was done next.

Each table gives R@k of BM25 and of assocmem at each depth, paired with a 95% bootstrap
interval of every difference, and, beside them, the crude contiguity baseline the recall
issue measured: `fast`'s list with the stream neighbours of its top two hits put in after
them (ranks 3-6), which shows how much a read that follows a strong match to its
neighbours could gain. Both use the read path the API runs, on a state folded in-process.
The cmrc proxy picks its questions by BM25's best match, so BM25 with neighbours would
win it by construction; the baseline is measured on assocmem's own ranking instead.

    .venv/bin/python bench/episodes.py cmrc ../shared/data/zh/cmrc2018_trial.json
    .venv/bin/python bench/episodes.py commits ../shared/data/corpus_en.jsonl --notes 30000
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cmrc import paragraph_of, sentences_and_questions, tokens
from questions import content_words, first_name
from retrieval import Bm25, Question, ask, build_state, describe, english_tokens, hits, paired
from skeleton import load_corpus

from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import extract_concepts

DEPTHS = ("fast", "standard", "deep")
SESSION_GAP = 4 * 3600.0
"""Seconds between two commits of one author that still belong to one session."""
TURN = 60.0
"""Seconds between two turns of a conversation."""


def neighbours(streams: Sequence[int]) -> dict[int, list[int]]:
    """Row -> the rows written just after and just before it in its stream (log order)."""
    last: dict[int, int] = {}
    around: dict[int, list[int]] = {}
    for row, stream in enumerate(streams):
        if stream in last:
            around.setdefault(last[stream], []).insert(0, row)
            around.setdefault(row, []).append(last[stream])
        last[stream] = row
    return around


def with_neighbours(ranked: list[int], around: dict[int, list[int]], k: int) -> list[int]:
    """`ranked` with the stream neighbours (next, then previous) of its top two put right
    after them: the contiguity baseline."""
    head = ranked[:2]
    extra = [near for row in head for near in around.get(row, [])]
    seen: list[int] = []
    for row in [*head, *extra, *ranked[2:]]:
        if row not in seen:
            seen.append(row)
    return seen[:k]


def report(
    name: str,
    state: State,
    bm25: Bm25,
    questions: list[Question],
    streams: Sequence[int],
    ks: tuple[int, ...],
) -> None:
    print(f"{name}: {len(questions)} questions, e.g. {questions[0].text!r}")
    around = neighbours(streams)
    for k in ks:
        plain = [hits(q.answers, bm25.ask(q, k), k) for q in questions]
        found = {d: [hits(q.answers, ask(state, q, d, k), k) for q in questions] for d in DEPTHS}
        followed = [
            hits(q.answers, with_neighbours(ask(state, q, "fast", k), around, k), k)
            for q in questions
        ]
        label = f"R@{k} fast + neighbours of top 2"
        print(describe(label, paired(found["fast"], followed), ("fast", "+next")))
        for depth in DEPTHS:
            print(describe(f"R@{k} {depth}", paired(plain, found[depth]), ("BM25", "assocmem")))
        print(
            describe(
                f"R@{k} standard vs fast",
                paired(found["fast"], found["standard"]),
                ("fast", "standard"),
            )
        )
        print(
            describe(f"R@{k} deep vs fast", paired(found["fast"], found["deep"]), ("fast", "deep"))
        )
        alone = [hits(q.answers, ask(state, q, "standard", k, context=False), k) for q in questions]
        print(
            describe(
                f"R@{k} standard, context off vs on",
                paired(alone, found["standard"]),
                ("off", "on"),
            )
        )


def cmrc(path: Path) -> None:
    sentences, pairs = sentences_and_questions(path)
    streams = paragraph_of(path)
    bm25 = Bm25(sentences, tokens)
    questions = []
    now = 1_700_000_000.0
    for text, target in pairs:
        best = bm25.ask(Question(text, frozenset(), now), 1)
        if best and best[0] != target and abs(best[0] - target) == 1:
            if streams[best[0]] == streams[target]:
                questions.append(Question(text, frozenset({target}), now))
    times = [now - 365 * 86_400.0 + TURN * n for n in range(len(sentences))]
    state = build_state(sentences, times, progress=False)
    report("cmrc, answer beside the best match", state, bm25, questions, streams, (1, 5, 10))


def commits(path: Path, notes: int, count: int, seed: int) -> None:
    rows = list(reversed(load_corpus(path, notes)))  # the corpus is newest first
    texts = [f"{r['author']}: {r['text']}" for r in rows]
    times = [float(r["ts"]) for r in rows]
    state = build_state(texts, times)
    streams = author_sessions(rows)
    nexts = _next_in_session(rows, streams)
    frequency = {c: state.postings.size(i) for c, i in state.concept_index.items()}
    rnd = random.Random(seed)
    candidates = [row for row in range(len(rows)) if row in nexts]
    rnd.shuffle(candidates)
    questions: list[Question] = []
    for row in candidates:
        memory = state.rows[row]
        allowed = set(memory.concepts[: memory.matched]) - set(
            extract_concepts(rows[row]["author"])
        )
        words = content_words(rows[row]["text"], allowed)
        if len(words) < 2:
            continue
        pool, chosen = list(words), []
        for _ in range(min(rnd.choice((2, 3)), len(pool))):
            pick = rnd.choices(pool, weights=[1 / frequency[c] for c in pool])[0]
            chosen.append(pick)
            pool.remove(pick)
        said = " ".join(words[c] for c in chosen)
        text = f"what did {first_name(rows[row]['author'])} do after {said}?"
        questions.append(Question(text, frozenset({nexts[row]}), times[-1]))
        if len(questions) >= count:
            break
    bm25 = Bm25(texts, english_tokens)
    report("commits, the next step of a session", state, bm25, questions, streams, (10,))


def author_sessions(rows: list[dict]) -> list[int]:
    """Per commit (oldest first), its session: the author's commits within SESSION_GAP."""
    last: dict[str, tuple[float, int]] = {}
    sessions, number = [], 0
    for row in rows:
        seen = last.get(row["author"])
        if seen is None or row["ts"] - seen[0] > SESSION_GAP:
            seen = (row["ts"], number)
            number += 1
        last[row["author"]] = (row["ts"], seen[1])
        sessions.append(seen[1])
    return sessions


def _next_in_session(rows: list[dict], sessions: list[int]) -> dict[int, int]:
    """Commit -> the next commit of its session (the stream neighbour a read should bring)."""
    latest: dict[int, int] = {}
    following: dict[int, int] = {}
    for row, session in enumerate(sessions):
        if session in latest:
            following[latest[session]] = row
        latest[session] = row
    return following


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("proxy", choices=("cmrc", "commits"))
    parser.add_argument("data", type=Path, help="a CMRC 2018 SQuAD file, or corpus_en.jsonl")
    parser.add_argument("--notes", type=int, default=30_000, help="commits: how many, newest")
    parser.add_argument("--questions", type=int, default=600, help="commits: how many")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    run: Callable[[], None] = (
        (lambda: cmrc(args.data))
        if args.proxy == "cmrc"
        else (lambda: commits(args.data, args.notes, args.questions, args.seed))
    )
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
