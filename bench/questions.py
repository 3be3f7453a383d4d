"""Questions with known answers, made from the commit corpus: known items of every age,
citations (a later commit describing an earlier one in its own words), and associations
(a memory asked for by concepts it does not carry, only its neighbours do)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator

from retrieval import Question, age_bucket

from assocmem.engine.recall.links import links_of
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import _TOKEN, extract_concepts

DAY = 86_400.0
TEMPLATES = (
    "{words}",
    "what did {name} say about {words}?",
    "when did {name} change {words}?",
    "{name} {words}",
    "what kind of {words} did {name} work on?",
    "how many {words} did {name} mention recently?",
)
"""Ways a person asks for a memory: bare words, or a question naming the author (the
speaker of a conversation), with the interrogatives and fillers a real question carries."""


def first_name(author: str) -> str:
    return author.split()[0]


def content_words(text: str, allowed: set[str]) -> dict[str, str]:
    """Each concept of `allowed` found in `text`, written as the first word that gives it."""
    words: dict[str, str] = {}
    for word in _TOKEN.findall(text[:2000].lower()):
        found = extract_concepts(word)
        if found and found[0] in allowed:
            words.setdefault(found[0], word)
    return words


def known_items(
    state: State, messages: list[str], authors: list[str], count: int, now: float, seed: int
) -> list[Question]:
    """2-3 telling words of a memory's message (the known-item query model of Azzopardi,
    de Rijke & Balog, SIGIR 2007: sampled by 1 / document frequency), often in a question
    naming its author; as many targets of each age bucket."""
    rnd = random.Random(seed)
    frequency = {c: state.postings.size(i) for c, i in state.concept_index.items()}
    by_age: dict[str, list[int]] = {}
    for memory in state.rows:
        by_age.setdefault(age_bucket((now - memory.ts) / DAY), []).append(memory.row)
    questions = []
    for rows in by_age.values():
        rnd.shuffle(rows)
        picked = 0
        for row in rows:
            memory = state.rows[row]
            name = set(extract_concepts(authors[row]))
            allowed = set(memory.concepts[: memory.matched]) - name
            words = content_words(messages[row], allowed)
            if len(words) < 2:
                continue
            pool, chosen = list(words), []
            for _ in range(min(rnd.choice((2, 3)), len(pool))):
                pick = rnd.choices(pool, weights=[1 / frequency[c] for c in pool])[0]
                chosen.append(pick)
                pool.remove(pick)
            text = rnd.choice(TEMPLATES).format(
                words=" ".join(words[c] for c in chosen), name=first_name(authors[row])
            )
            age = age_bucket((now - memory.ts) / DAY)
            questions.append(Question(text, frozenset({row}), now, age))
            picked += 1
            if picked >= count // len(by_age):
                break
    rnd.shuffle(questions)
    return questions


_CITATION = re.compile(r"\b([0-9a-f]{7,40})\s+\(([^()]*?),\s+(\d{4}-\d{2}-\d{2})\)", re.S)
_SENTENCE = re.compile(r".*?(?:[.!?](?=\s)|\n\s*\n|$)", re.S)
"""Up to a full stop before white space, or a blank line: "git-rebase.sh" is one word."""


def citations(
    texts: list[str], hashes: list[str], now: float, kind: str, count: int, seed: int
) -> list[Question]:
    """A later commit's words about an earlier one it cites as `<hash> (<subject>, <date>)`.

    - described: the citing sentence with every citation cut out, what the later author said
      of the earlier change in their own words;
    - cited: the quoted subject and date, the way people name a change they remember.
    """
    questions = []
    for row, match, target in _cited(texts, hashes):
        if kind == "cited":
            query = " ".join(f"{match.group(2)}, {match.group(3)}".split())
        else:
            query = _described(texts[row], match)
        if len(extract_concepts(query)) >= 2:
            questions.append(Question(query, frozenset({target}), now, kind))
    rnd = random.Random(seed)
    rnd.shuffle(questions)
    return questions[:count]


def citing(texts: list[str], hashes: list[str]) -> set[int]:
    """The rows that cite an earlier commit: each holds the words of its described
    questions."""
    return {row for row, _, _ in _cited(texts, hashes)}


def _cited(texts: list[str], hashes: list[str]) -> Iterator[tuple[int, re.Match[str], int]]:
    """Each citation of an earlier commit: the citing row, the citation, the cited row."""
    by_prefix: dict[str, int] = {}
    for row, full in enumerate(hashes):
        by_prefix.setdefault(full[:7], row)
    for row, text in enumerate(texts):
        for match in _CITATION.finditer(text):
            target = by_prefix.get(match.group(1)[:7])
            if target is not None and target < row and hashes[target].startswith(match.group(1)):
                yield row, match, target


def _described(text: str, match: re.Match[str]) -> str:
    """The sentence holding the citation, every citation cut out of it."""
    marked = text[: match.start()] + "\x00" + text[match.end() :]
    for sentence in _SENTENCE.finditer(_CITATION.sub(" ", marked)):
        if "\x00" in sentence.group(0):
            return " ".join(sentence.group(0).replace("\x00", " ").split())
    return ""


def associations(
    state: State, count: int, now: float, seed: int, floor: float = 2.0
) -> list[Question]:
    """A memory asked for by its neighbours only: for 2-3 of its core concepts, the concept
    most strongly linked to each (PPMI, written at least `floor` times) that the memory does
    not carry. The answer shares no concept with the question; only links lead to it."""
    rnd = random.Random(seed)
    weights = links_of(state)
    df = Counter({i: state.postings.size(i) for i in range(len(state.concepts))})
    questions = []
    rows = list(range(len(state.rows)))
    rnd.shuffle(rows)
    for row in rows:
        memory = state.rows[row]
        carried = {state.concept_index[c] for c in memory.concepts}
        neighbours: list[int] = []
        for concept in memory.concepts[: memory.core]:
            links = weights.row(state.concept_index[concept], floor)
            for target in links.targets[:5]:
                j = int(target)
                if j not in carried and j not in neighbours and 3 <= df[j] <= 500:
                    neighbours.append(j)
                    break
        if len(neighbours) < 2:
            continue
        chosen = rnd.sample(neighbours, min(rnd.choice((2, 3)), len(neighbours)))
        names = tuple(state.concepts[j] for j in chosen)
        questions.append(Question(" ".join(names), frozenset({row}), now, "association", names))
        if len(questions) >= count:
            break
    return questions
