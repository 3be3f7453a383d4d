"""What the recall-quality benchmarks share: a state built in-process, the read path the API
runs, a BM25 baseline on the same text, and paired figures.

Every benchmark here reads through `ask`, which runs what `POST /v1/read` runs for a
question's text (time expression, question words, concepts, recall) on a state folded
in-process: no HTTP, so thousands of questions take seconds.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import bm25s
import numpy as np
from skeleton import written_event  # bench/ is on sys.path when a script here runs

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.position import Position
from assocmem.engine.recall.question import parse_question, read_query
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.state.state import State

K = 10
"""Answers a question is judged on: R@10."""


@dataclasses.dataclass(frozen=True, slots=True)
class Question:
    text: str
    answers: frozenset[int]
    """Rows (log order, from 0) of the memories that answer it."""
    now: float
    """The read's clock, unix seconds."""
    kind: str = ""
    """A category reported apart (e.g. the target's age)."""
    concepts: tuple[str, ...] = ()
    """Concepts named instead of text (the read extracts nothing)."""


def build_state(
    texts: Sequence[str],
    times: Sequence[float],
    progress: bool = True,
    sessions: Sequence[str] | None = None,
) -> State:
    """Fold one memory.written event per text, extracting concepts as the API does; with
    `sessions`, each text written in its own (a conversation's, say)."""
    events = []
    for n, (text, ts) in enumerate(zip(texts, times, strict=True)):
        event = written_event(text, ts, n)
        events.append(
            event if sessions is None else dataclasses.replace(event, session=sessions[n])
        )
        if progress and (n + 1) % 5000 == 0:
            print(f"  extracted {n + 1:,} of {len(texts):,}", flush=True)
    return fold_from_zero(events)


def row_of(memory_id: str) -> int:
    return int(memory_id.split("-")[0]) - 1


def ask(
    state: State,
    question: Question,
    depth: str,
    limit: int = K,
    auto_time: bool = True,
    context: bool = True,
) -> list[int]:
    """The rows a read of the question's text returns, best first (the API's read path)."""
    now = datetime.fromtimestamp(question.now, UTC)
    options = {"depth": depth, "limit": limit, "context": context}
    if question.concepts:
        query = Query(question.concepts, now=question.now, **options)  # type: ignore[arg-type]
    else:
        query = read_query(question.text, now, auto_time=auto_time, **options)
    if query is None:
        return []
    return [row_of(item.memory.id) for item in recall(state, query).items]


_WORD = re.compile(r"\w+", re.UNICODE)
ENGLISH_STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours""".split()
)


def english_tokens(text: str) -> list[str]:
    """Plain BM25 tokens: lower-cased words, stop words out, no stemming."""
    return [w for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP]


class Bm25:
    """BM25 (bm25s, Lucene's variant: k1 1.5, b 0.75) over the same texts the state holds."""

    def __init__(self, texts: Sequence[str], tokens: Callable[[str], list[str]]) -> None:
        self.tokens = tokens
        self.index = bm25s.BM25(method="lucene")
        self.index.index([tokens(t) or ["\0"] for t in texts], show_progress=False)

    def ask(self, question: Question, limit: int = K) -> list[int]:
        words = self.tokens(question.text)
        if not words:
            return []
        scores = self.index.get_scores(words)
        order = np.argsort(-scores, kind="stable")[:limit]
        return [int(n) for n in order if scores[n] > 0]


def hits(answers: frozenset[int], ranked: list[int], k: int = K) -> float:
    """Share of the answers in the first k (R@k of one question)."""
    return len(answers & set(ranked[:k])) / len(answers)


@dataclasses.dataclass(frozen=True, slots=True)
class Paired:
    """R@k of two systems over the same questions, and how sure the difference is."""

    first: float
    second: float
    low: float
    high: float
    """95% bootstrap interval of second - first."""
    n: int


def paired(first: Sequence[float], second: Sequence[float], seed: int = 0) -> Paired:
    a, b = np.asarray(first), np.asarray(second)
    diff = b - a
    rnd = np.random.default_rng(seed)
    samples = rnd.integers(0, len(diff), size=(2000, len(diff)))
    means = diff[samples].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Paired(float(a.mean()), float(b.mean()), float(low), float(high), len(diff))


def describe(label: str, result: Paired, names: tuple[str, str]) -> str:
    sign = "+" if result.second >= result.first else ""
    significant = "" if result.low <= 0 <= result.high else "  *"
    return (
        f"{label:<34} {names[0]} {result.first:.3f}  {names[1]} {result.second:.3f}"
        f"  ({sign}{result.second - result.first:.3f}, 95% CI {result.low:+.3f} .. {result.high:+.3f},"
        f" n={result.n}){significant}"
    )


def rate(state: State, questions: list[Question], now: float, unhelpful: bool) -> list[int]:
    """Fold the ratings of each question's read: its answers helpful (+1) and, with
    `unhelpful`, the other memories the read returned unhelpful (-1); the rated rows."""
    clock = datetime.fromtimestamp(now, UTC)
    events: list[Event] = []
    rated: list[int] = []
    ms = state.position.ms

    def add(rows: list[int], outcome: float, concepts: tuple[str, ...]) -> None:
        ids = [state.rows[r].id for r in rows]
        data = {"memory_ids": ids, "outcome": outcome, "concepts": list(concepts)}
        position = Position(ms + len(events) + 1, 0)
        events.append(Event(FEEDBACK_GIVEN.name, "default", "bench", now, data, position=position))
        rated.extend(rows)

    for q in questions:
        concepts = q.concepts or parse_question(q.text, clock).concepts
        if not concepts:
            continue
        shown = ask(state, q, "standard") if unhelpful else []
        add(sorted(q.answers), 1.0, concepts)
        wrong = [r for r in shown if r not in q.answers]
        if wrong:
            add(wrong, -1.0, concepts)
    rejected = fold(state, events)
    assert not rejected, rejected[:3]
    return rated


def transfer_room(
    state: State,
    held: list[Question],
    before: Sequence[float],
    untouched: list[int],
    rated: set[int],
    sessions: Sequence[int],
    k: int,
) -> str:
    """Where the answers of untouched questions that a read still misses after rating sit,
    and so how much any rule acting through the rated memories could win on them (`held`:
    the questions not rated, `before`: their R@k before rating; `untouched`: indices of
    those whose answers no rating touched; `rated`: the rated rows; `sessions`: per row,
    its session). Dropping memories is a bound, not a rule: it would cost every question
    whose answer a rating touched."""
    valence = state.valence.values[: len(state.rows)]
    liked = {sessions[r] for r in rated if valence[r] > 0}
    counts: Counter[str] = Counter()
    for n in untouched:
        answers = held[n].answers
        first = ask(state, held[n], "standard", k)
        if answers & set(first):
            continue
        wide = ask(state, held[n], "standard", 50)
        counts.update(
            {
                "missed": True,
                "earlier": before[n] == 0,
                "shown": any(r in rated for r in first),
                "session": bool({sessions[a] for a in answers} & {sessions[r] for r in first}),
                "liked": any(sessions[a] in liked for a in answers),
                "wide": bool(answers & set(wide)),
                "helpful": bool(answers & set([r for r in wide if valence[r] <= 0][:k])),
                "unhelpful": bool(answers & set([r for r in wide if valence[r] >= 0][:k])),
            }
        )
    lines = [
        f"    untouched, missed after rating (standard, R@{k}): {counts['missed']} of"
        f" {len(untouched)}, {counts['earlier']} of them missed before it too; of those",
        f"      a rated memory among the first {k}: {counts['shown']}",
        f"      a memory of the answer's session among the first {k}: {counts['session']}",
        f"      the answer in the session of a memory rated helpful: {counts['liked']}",
        f"      the answer among the first 50: {counts['wide']}",
        f"      found once every memory rated helpful is dropped: {counts['helpful']}",
    ]
    if (valence < 0).any():
        lines.append(
            f"      found once every memory rated unhelpful is dropped: {counts['unhelpful']}"
        )
    return "\n".join(lines)


def seeded_half(key: str, seed: int) -> int:
    """0 or 1, by a hash of `key` that does not depend on Python's hash randomisation."""
    value = 0
    for ch in f"{seed}:{key}":
        value = (value * 1_000_003 + ord(ch)) % (2**61 - 1)
    return value % 2


def age_bucket(age_days: float) -> str:
    if age_days < 30:
        return "< 1 month"
    if age_days < 365:
        return "1-12 months"
    if age_days < 5 * 365:
        return "1-5 years"
    return "> 5 years"


AGE_BUCKETS = ("< 1 month", "1-12 months", "1-5 years", "> 5 years")
