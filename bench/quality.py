"""Recall quality on real text: assocmem's read path next to BM25, question by question.

Memories are commit messages of the git project in log order, each written as
"<author>: <message>" at its commit time (an author is a speaker: a name that half the
memories of a conversation carry). Every read runs at "now" = the newest memory, as when
an agent asks right after the conversation, so recency can bury an old answer.

Benchmarks (each prints its table; `--only` picks some):
- known-item: 2-3 telling words of a memory, often in a question naming its author, the
  targets spread over every age; R@10 per age;
- citations: a later commit's sentence about an earlier one it cites, the citation cut out
  (described), or the cited subject and date (cited: a date to use as evidence);
- paraphrases: the described questions asked of the commits without those that cite
  one: no memory holds the question's words, as when a person asks in their own;
- association: a memory asked for by its neighbours' concepts only (it carries none of
  them): fast cannot find it, standard and deep must follow links;
- feedback: the questions split in two by a seeded hash; the answers of one half rated
  helpful (then, in a second run, the other memories their reads returned unhelpful too);
  R@10 at each depth of the rated half asked again, and of the other half before and
  after, for the questions whose answers no rating touched; where the answers those reads
  still miss sit (in the session of a rated memory, one author's commits within a few
  hours: how much a rule acting through the rated memories could win); then `standard`
  with links-only and valence-only ablations.

    .venv/bin/python bench/quality.py ../shared/data/corpus_en.jsonl --notes 20000
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from datetime import UTC, datetime
from pathlib import Path

from episodes import author_sessions
from questions import associations, citations, citing, known_items
from retrieval import (
    AGE_BUCKETS,
    Bm25,
    K,
    Question,
    ask,
    build_state,
    describe,
    english_tokens,
    hits,
    paired,
    rate,
    seeded_half,
    transfer_room,
)
from skeleton import load_corpus

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.events.consolidation import Rule, decide
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import dump_state, load_state
from assocmem.engine.state.state import State

DEPTHS = ("fast", "standard", "deep")
BENCHMARKS = ("known-item", "citations", "paraphrases", "association", "feedback")


def compare(
    label: str, state: State, bm25: Bm25 | None, questions: list[Question], kinds: tuple[str, ...]
) -> None:
    """R@10 at each depth, and BM25's, overall and per kind of question; `standard` against
    `fast` and episodic context off against on, at R@5 and R@10."""
    print(f"\n{label}: {len(questions)} questions, e.g. {questions[0].text!r}")
    start = time.perf_counter()
    lists = {d: [ask(state, q, d) for q in questions] for d in DEPTHS}
    elapsed = (time.perf_counter() - start) / (len(questions) * len(DEPTHS)) * 1000
    scores = {d: recall_at(questions, lists[d], K) for d in DEPTHS}
    baseline = [hits(q.answers, bm25.ask(q)) for q in questions] if bm25 else [0.0] * len(questions)
    for depth in DEPTHS:
        print(describe(f"  R@10 {depth}", paired(baseline, scores[depth]), ("BM25", "assocmem")))
    if len(kinds) > 1:
        for kind in kinds:
            at = [n for n, q in enumerate(questions) if q.kind == kind]
            if at:
                result = paired([baseline[n] for n in at], [scores["standard"][n] for n in at])
                print(describe(f"    {kind} (standard)", result, ("BM25", "assocmem")))
    alone = [ask(state, q, "standard", context=False) for q in questions]
    for k in (5, K):
        fast, standard = (recall_at(questions, lists[d], k) for d in ("fast", "standard"))
        off = recall_at(questions, alone, k)
        print(describe(f"  R@{k} standard vs fast", paired(fast, standard), ("fast", "standard")))
        print(describe(f"  R@{k} context off vs on", paired(off, standard), ("off", "on")))
    print(f"  engine read, mean over depths: {elapsed:.2f} ms")


def paraphrases(
    texts: list[str], times: list[float], cut: set[int], described: list[Question]
) -> None:
    """`compare` for the described questions, asked of the commits without the rows `cut`
    (those that cite another): a described question is a sentence of the commit that cites
    its answer, the strongest match of its read, whose stream neighbours episodic context
    then brings (bench/README.md)."""
    kept = [row for row in range(len(texts)) if row not in cut]
    at = {row: n for n, row in enumerate(kept)}
    questions = [
        dataclasses.replace(q, answers=frozenset(at[a] for a in q.answers))
        for q in described
        if all(a in at for a in q.answers)
    ]
    kept_texts = [texts[row] for row in kept]
    state = build_state(kept_texts, [times[row] for row in kept], progress=False)
    bm25 = Bm25(kept_texts, english_tokens)
    label = f"paraphrases (described, the {len(cut):,} commits that cite one not written)"
    compare(label, state, bm25, questions, ())


def recall_at(questions: list[Question], found: list[list[int]], k: int) -> list[float]:
    """R@k of each question, from the rows its read returned."""
    return [hits(q.answers, got, k) for q, got in zip(questions, found, strict=True)]


def feedback_protocol(
    state: State, questions: list[Question], seed: int, unhelpful: bool, sessions: list[int]
) -> None:
    rated_half = [q for q in questions if seeded_half(q.text, seed) == 0]
    held = [q for q in questions if seeded_half(q.text, seed) == 1]

    def scores(group: list[Question], depth: str) -> list[float]:
        return [hits(q.answers, ask(state, q, depth)) for q in group]

    before = {d: scores(held, d) for d in DEPTHS}
    asked = {d: scores(rated_half, d) for d in DEPTHS}
    rated = set(rate(state, rated_half, questions[0].now, unhelpful))
    untouched = [n for n, q in enumerate(held) if not q.answers & rated]
    print(
        f"\nfeedback: {len(rated_half)} questions rated (their answers helpful"
        f"{', the other memories shown unhelpful' if unhelpful else ''}),"
        f" {len(held)} held out, {len(untouched)} of them with answers no rating touched"
    )

    def report(label: str, depth: str) -> None:
        name = f"{label}, {depth}"
        again = scores(rated_half, depth)
        result = paired(asked[depth], again)
        print(describe(f"  {name}, rated, asked again", result, ("before", "after")))
        after, first = scores(held, depth), before[depth]
        print(describe(f"  {name}, all held out", paired(first, after), ("before", "after")))
        for kind in sorted({q.kind for q in held}):
            at = [n for n in untouched if held[n].kind == kind]
            result = paired([first[n] for n in at], [after[n] for n in at])
            print(describe(f"    untouched, {kind}", result, ("before", "after")))
        result = paired([first[n] for n in untouched], [after[n] for n in untouched])
        print(describe("    untouched, all", result, ("before", "after")))

    for depth in DEPTHS:
        report("links + valence", depth)
    print(transfer_room(state, held, before["standard"], untouched, rated, sessions, K))
    valence = {r: state.rows[r].valence for r in rated}
    for r in rated:
        state.set_valence(state.rows[r], 0.0)
    report("links only", "standard")
    for r, v in valence.items():
        state.set_valence(state.rows[r], v)
    learned, state.learned = state.learned, {}
    state.learned_version += 1
    report("valence only", "standard")
    state.learned = learned
    state.learned_version += 1


def cached_state(path: Path | None, texts: list[str], times: list[float]) -> State:
    if path is not None and path.exists():
        try:
            state = load_state(path.read_bytes())
        except CorruptSnapshot:  # written by another version
            state = None
        if state is not None and len(state.rows) == len(texts):
            return state
    state = build_state(texts, times)
    if path is not None:
        path.write_bytes(dump_state(state))
    return state


def consolidated(
    state: State, now: float, questions: list[list[Question]], rule: dict[str, float | bool]
) -> list[list[Question]]:
    """Consolidate `state` in place as the nightly job would at `now` (the default rule);
    the questions with a merged duplicate's answer moved to the note that stands for it."""
    start = time.perf_counter()
    decision, effect = decide(state, Rule(at=now, **rule))
    data = LINKS_CONSOLIDATED.payload(decision=decision, effect=effect, decided_at="0-0")
    position = Position(state.position.ms + 1, 0)
    fold(state, [Event(LINKS_CONSOLIDATED.name, "default", "bench", now, data, position=position)])
    print(f"consolidated in {time.perf_counter() - start:.1f} s: {effect}")
    rows = {m.id: m.row for m in state.rows}
    moved = {rows[old]: rows[kept] for old, kept in decision.merged}
    return [
        [
            dataclasses.replace(q, answers=frozenset(moved.get(a, a) for a in q.answers))
            for q in group
        ]
        for group in questions
    ]


def rule_values(given: list[str]) -> dict[str, float | bool]:
    values: dict[str, float | bool] = {}
    for item in given:
        name, _, value = item.partition("=")
        if value in ("true", "false"):
            values[name] = value == "true"
        else:
            values[name] = int(value) if value.isdigit() else float(value)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=20_000, help="newest commits written")
    parser.add_argument("--questions", type=int, default=600, help="questions per benchmark")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated benchmarks")
    parser.add_argument(
        "--consolidate",
        action="store_true",
        help="read after a sleep consolidation at 'now', as a night would leave it",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a consolidation rule setting other than its default, e.g. written_half_life_days=365",
    )
    parser.add_argument(
        "--state-cache",
        type=Path,
        help="file to keep the folded state in between runs (rebuilt when missing)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    if only - set(BENCHMARKS):
        parser.error(f"--only {args.only!r}: expected some of {', '.join(BENCHMARKS)}")
    rows = load_corpus(args.corpus, args.notes)[::-1]  # the corpus is newest first
    texts = [f"{r['author']}: {r['text'][:2000]}" for r in rows]
    start = time.perf_counter()
    times = [float(r["ts"]) for r in rows]
    state = cached_state(args.state_cache, texts, times)
    bm25 = Bm25(texts, english_tokens)
    now = float(rows[-1]["ts"])
    print(
        f"{len(rows):,} memories, {len(state.concepts):,} concepts, built in"
        f" {time.perf_counter() - start:.0f} s; now = the newest memory"
        f" ({datetime.fromtimestamp(now, UTC):%Y-%m-%d})"
    )
    authors = [r["author"] for r in rows]
    messages = [r["text"][:2000] for r in rows]
    known = known_items(state, messages, authors, args.questions, now, args.seed)
    hashes = [r["id"] for r in rows]
    described = citations(messages, hashes, now, "described", args.questions, args.seed)
    cited = citations(messages, hashes, now, "cited", args.questions, args.seed)
    linked = associations(state, args.questions, now, args.seed) if "association" in only else []
    paraphrased = described  # asked of another state: the rows before any consolidation
    if args.consolidate:
        groups = {
            "known-item": known,
            "described": described,
            "cited": cited,
            "association": linked,
        }
        before = {
            name: {d: [hits(q.answers, ask(state, q, d)) for q in group] for d in DEPTHS}
            for name, group in groups.items()
            if group
        }
        moved = consolidated(state, now, list(groups.values()), rule_values(args.rule))
        groups = dict(zip(groups, moved, strict=True))
        known, described, cited, linked = moved
        print("\nR@10 before and after the consolidation, the same questions:")
        for name, scores in before.items():
            for depth in DEPTHS:
                after = [hits(q.answers, ask(state, q, depth)) for q in groups[name]]
                print(
                    describe(f"  {name} {depth}", paired(scores[depth], after), ("before", "after"))
                )
    if "known-item" in only:
        compare("known-item", state, bm25, known, AGE_BUCKETS)
    if "citations" in only:
        compare("citations, described", state, bm25, described, ())
        compare("citations, cited with date", state, bm25, cited, ())
    if "paraphrases" in only:
        paraphrases(texts, times, citing(messages, hashes), paraphrased)
    if "association" in only:
        compare("association", state, bm25, linked, ())
    if "feedback" in only:
        questions = [*known, *described]
        sessions = author_sessions(rows)
        for unhelpful in (False, True):
            state = cached_state(args.state_cache, texts, times)
            feedback_protocol(state, questions, args.seed, unhelpful, sessions)


if __name__ == "__main__":
    main()
