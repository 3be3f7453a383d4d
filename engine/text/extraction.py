"""Concepts from text, run when an event is appended (never during the fold).

English words are case-folded, stop words dropped, phrasal compounds joined
("timed out" -> timeout, "set up" -> setup) and inflections folded with the
Snowball stemmer; runs of Chinese characters are cut with jieba, whose
dictionary ships inside the package. Long text is ranked by TF-IDF, with word
rarity taken from wordfreq (English) and jieba's IDF table (Chinese), both
installed data: nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable
from itertools import chain, compress, repeat
from operator import itemgetter, mul
from typing import Any, TypeVar

import numpy as np
import Stemmer

from assocmem.engine.concept import MAX_CONCEPT_LENGTH, normalise_concept, normalise_concepts
from assocmem.engine.text.word_table import WordTable

EXTRACTOR_VERSION = "tfidf-4"
"""Stored in each event, so a replay can tell which extractor made its concepts. Since
tfidf-3, a named one-word concept takes the form extraction gives that word; since tfidf-4,
"via", "uses" and 时, 新, 前, 出, 问题 are stop words."""
LONG_TEXT = 80
"""Characters above which text is ranked into tiers instead of all-core."""
CORE_SHARE, IMPORTANT_SHARE = 0.2, 0.4
DEFAULT_LIMIT = 32
"""Concepts of short text and of queries."""
LONG_LIMIT = 160
"""Concepts kept of long text: every tier, so any content word of a memory can find it."""

_HAN = "\u4e00-\u9fff\u3400-\u4dbf"
# A word of another script stops where Han characters start: "Nexon时隔6年" is "nexon", then jieba.
_TOKEN = re.compile(rf"[{_HAN}]+|[^\W_{_HAN}](?:[^\W{_HAN}]|[.+#/-])*", re.UNICODE)
_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_ASCII_TOKEN = re.compile(r"[^\W_](?:\w|[.+#/-])*", re.ASCII)
"""`_TOKEN` for ASCII text (no Han, and \\w is [a-zA-Z0-9_] either way): under half its time."""
PARTICLES = frozenset({"out", "up", "in", "back", "down", "off", "over"})
COMPOUND_MIN_ZIPF = 2.5
"""How common (wordfreq's Zipf scale) 'verb+particle' must be as one word to be joined."""

ENGLISH_STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves let lets get got use used uses using make made may might must shall
    via""".split()
)
CHINESE_STOP_WORDS = frozenset(
    "的 了 和 是 在 也 有 就 不 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 这 那 之 为 以 于 上 下 中 对 把 被 让 从 到 但 并 等 什么 哪个 哪些 怎么 如何 为什么 多少 哪里 哪儿 谁 吗 呢 吧 啊 之后 之前 然后 以后 已经 可以 因为 所以 如果 还是 就是 这个 那个 进行 用 我 你 他 她 它 个 们 很 还 又 会 能 要 由 将 其 此 该 所 若 则 即 且 呀 哦 嗯 时 新 前 出 问题".split()
)
RARE_IDF = 8.0
"""IDF of a word the frequency tables do not know (identifiers, names): rare, so telling."""


@dataclasses.dataclass(frozen=True, slots=True)
class Extraction:
    concepts: tuple[str, ...]
    """Ranked: core first, then important, then supplement."""
    core: int
    matched: int
    """Core + important."""
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    """Concept -> the word the text wrote for it (its first), where the two differ."""

    @property
    def tiers(self) -> list[int]:
        return [self.core, self.matched]


@functools.cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@functools.cache
def _jieba():  # type: ignore[no-untyped-def]
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


_Table = TypeVar("_Table")


def _loaded_once(load: Callable[[], _Table]) -> Callable[[], _Table]:
    """`load`, cached, and run once even when threads ask at once: an API warms its tables
    up in a thread while the first writes already extract (each building them too made the
    first batch of a fresh API wait for every build)."""
    cached = functools.cache(load)
    lock = threading.Lock()

    @functools.wraps(load)
    def loaded() -> _Table:
        with lock:
            return cached()

    return loaded


@_loaded_once
def _english_frequencies() -> WordTable:
    """wordfreq's English frequencies, as its get_frequency_dict gives them: a word in
    several of its bands keeps the last (rarest) one."""
    import wordfreq

    bands = wordfreq.read_cBpack(wordfreq.available_languages("best")["en"])
    frequencies = [wordfreq.cB_to_freq(-band) for band in range(len(bands))]
    return WordTable(
        list(chain.from_iterable(bands)), np.repeat(frequencies, list(map(len, bands)))
    )


@_loaded_once
def _chinese_idf() -> tuple[WordTable, float]:
    """jieba's IDF table and its median, read as jieba.analyse reads them.

    Not through `import jieba.analyse`: that also builds its TextRank's part-of-speech
    tables, tens of MB more in every API process, which we never use.
    """
    from importlib.resources import files

    text = (files(_jieba().__name__) / "analyse" / "idf.txt").read_text(encoding="utf-8")
    fields = text.split()  # each line is a word and its IDF
    if len(fields) % 2:
        raise ValueError("jieba's idf.txt has a line that is not a word and its IDF")
    idfs = np.fromiter(map(float, fields[1::2]), dtype=np.float64, count=len(fields) // 2)
    table = WordTable(fields[0::2], idfs)
    return table, float(np.sort(table.values())[len(table) // 2])


def warm_up() -> None:
    """Load the word tables now rather than on the first write: wordfreq's and jieba's IDF.
    jieba's dictionary is left to the first text with Han in it: a process that never sees
    Chinese never loads it, and English writes right after a start no longer wait behind
    its load, which holds the interpreter at once for longer than the tables."""
    _english_frequencies()
    _chinese_idf()


def extract_concepts(text: str, limit: int = DEFAULT_LIMIT) -> tuple[str, ...]:
    """The distinct concepts of `text`, in first-seen order, at most `limit`."""
    return tuple(extract_terms(text, limit))


def extract_terms(text: str, limit: int = DEFAULT_LIMIT) -> dict[str, str]:
    """The distinct concepts of `text`, in first-seen order, at most `limit`, each with the
    word the text first wrote for it."""
    seen: dict[str, str] = {}
    for concept, surface in _terms(text):
        seen.setdefault(concept, surface)
        if len(seen) >= limit:
            break
    return seen


def given_concepts(raw: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Concepts a caller names, in the form extraction gives the same word, so that a note
    tagged "Timeouts" meets the text "timed out": a name that extraction reads as one concept
    becomes that concept. Any other name (a phrase, a stop word, a single letter) is kept as
    given, case-folded."""
    return tuple(given_terms(raw))


def given_terms(raw: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`given_concepts`, each with the name the caller gave it (case-folded)."""
    seen: dict[str, str] = {}
    cache = _given_names()
    for name in normalise_concepts(raw):
        seen.setdefault(_remembered(cache, name, _given_concept), name)
    return seen


def _given_concept(name: str) -> str:
    """The concept extraction reads `name` as, if it reads one; else `name` itself."""
    terms = {concept for concept, _ in _terms(name)}
    return terms.pop() if len(terms) == 1 else name


@functools.cache
def _given_names() -> dict[str, str]:
    """Normalised name -> the concept `given_terms` makes of it: agents name the same
    concepts again and again, and reading a name as text costs ten look-ups (cleared when
    full)."""
    return {}


def named(terms: dict[str, str]) -> Extraction:
    """An all-core extraction of given or short-text terms, with their labels."""
    concepts = tuple(terms)
    return Extraction(concepts, len(concepts), len(concepts), _labels(terms))


def _labels(terms: dict[str, str]) -> dict[str, str]:
    return {concept: surface for concept, surface in terms.items() if surface != concept}


def extract(text: str, limit: int = LONG_LIMIT) -> Extraction:
    """Concepts of `text` in tiers: all core for short text, TF-IDF ranked for long text."""
    if len(text) <= LONG_TEXT:
        return named(extract_terms(text, DEFAULT_LIMIT))
    terms = _terms(text)
    counts = Counter(map(itemgetter(0), terms))  # in order of first use
    surfaces = dict(reversed(terms))  # each concept's first word
    idfs = _idfs(list(map(surfaces.__getitem__, counts)))
    score = dict(zip(counts, map(mul, counts.values(), idfs), strict=True))
    ranked = sorted(score, key=score.__getitem__, reverse=True)[:limit]  # stable: ties in order
    n = len(ranked)
    core = max(1, math.ceil(n * CORE_SHARE)) if n else 0
    matched = min(n, core + math.ceil(n * IMPORTANT_SHARE))
    return Extraction(tuple(ranked), core, matched, _labels({c: surfaces[c] for c in ranked}))


def _idfs(words: list[str]) -> list[float]:
    """IDF of each word: jieba's table for Chinese, wordfreq's rarity for the rest."""
    known = _known_idfs()
    values = list(map(known.get, words))
    if None not in values:
        return values  # type: ignore[return-value]
    missing = [w for w, v in zip(words, values, strict=True) if v is None]
    chinese = [w for w in missing if _CJK.match(w)]
    english = [w for w in missing if not _CJK.match(w)]
    fresh: dict[str, float] = {}
    if chinese:  # English text does not wait for the Chinese table to load
        table, median = _chinese_idf()
        fresh.update(zip(chinese, map(float, table.get_many(chinese, median)), strict=True))
    frequencies = _english_frequencies().get_many(english, 0.0)
    fresh.update(zip(english, map(_rarity, frequencies), strict=True))
    if len(known) + len(fresh) > ENGLISH_TERMS_KEPT:
        known.clear()
    known.update(fresh)
    return [fresh[w] if v is None else v for w, v in zip(words, values, strict=True)]


@functools.cache
def _known_idfs() -> dict[str, float]:
    """Word -> its IDF, filled as words come (cleared when full)."""
    return {}


def _rarity(frequency: float) -> float:
    if not frequency:
        return RARE_IDF
    return max(0.5, -math.log10(frequency) - 1.0)


def _terms(text: str) -> list[tuple[str, str]]:
    """(concept, the word it came from) for each concept occurrence in `text`, in order."""
    normal = normalise_concept(text)
    if normal.isascii():  # most text: the tokens alike, found in under half the time
        return _ascii_terms(_ASCII_TOKEN.findall(normal))
    return _terms_by_token(_TOKEN.findall(normal), _CJK.search(normal) is not None)


def _ascii_terms(tokens: list[str]) -> list[tuple[str, str]]:
    """`_terms_by_token` of tokens without Han, in whole-list passes rather than a Python
    step per token: each token's term from the table, then a step only where a particle
    follows a word: less time than the loop, which was a good part of an extraction."""
    cache = _english_terms()
    terms = list(map(cache.get, tokens, repeat(_UNSEEN, len(tokens))))
    if _UNSEEN in terms:
        for n in [n for n, term in enumerate(terms) if term is _UNSEEN]:
            terms[n] = _remembered(cache, tokens[n], _english_term)
    stripped = list(map(str.rstrip, tokens, repeat(".-/", len(tokens))))
    particles = list(map(PARTICLES.__contains__, stripped))
    if True in particles:
        taken = -1  # the last particle joined to the word before it
        for n in compress(range(len(tokens) - 1), particles[1:]):
            if n != taken and (compound := _compound(tokens[n], stripped[n + 1])):
                concept = _stemmer().stemWord(compound)
                terms[n] = (concept, compound) if len(concept) <= MAX_CONCEPT_LENGTH else None
                terms[n + 1] = None
                taken = n + 1
    return list(filter(None, terms))


def _terms_by_token(tokens: list[str], has_han: bool) -> list[tuple[str, str]]:
    cache = _english_terms()
    terms: list[tuple[str, str]] = []
    n, count = 0, len(tokens)
    while n < count:
        token = tokens[n]
        following = tokens[n + 1] if n + 1 < count else ""
        if following[-1:] in _PARTICLE_ENDS:
            following = following.rstrip(".-/")
        if has_han and _CJK.match(token):
            words = _jieba().lcut(token)
            terms += [
                (w, w)
                for w in words
                if w.strip() and w not in CHINESE_STOP_WORDS and len(w) <= MAX_CONCEPT_LENGTH
            ]
        elif following in PARTICLES and (compound := _compound(token, following)):
            concept = _stemmer().stemWord(compound)
            if len(concept) <= MAX_CONCEPT_LENGTH:
                terms.append((concept, compound))
            n += 1
        else:
            term = cache.get(token, _UNSEEN)  # inline: a step for every token of a text
            if term is _UNSEEN:
                term = _remembered(cache, token, _english_term)
            if term is not None:
                terms.append(term)  # type: ignore[arg-type]
        n += 1
    return terms


ENGLISH_TERMS_KEPT = 200_000
"""Distinct tokens (words, given names, word + particle pairs) whose terms (IDFs, concepts,
compounds) extraction remembers in each of its four tables, some tens of MB each at most
(the last two stay far smaller: few words precede a particle, and agents name few
concepts): most tokens of a text were seen before, and a dictionary look-up costs a tenth
of stemming or ranking one again. Each is cleared when full."""
_UNSEEN = object()


def _remembered(table: dict[Any, Any], key: Any, make: Callable[[Any], Any]) -> Any:
    """`make(key)`, kept in `table` (cleared when it holds ENGLISH_TERMS_KEPT)."""
    found = table.get(key, _UNSEEN)
    if found is _UNSEEN:
        found = make(key)
        if len(table) >= ENGLISH_TERMS_KEPT:
            table.clear()
        table[key] = found
    return found


_PARTICLE_ENDS = frozenset(".-/")


@functools.cache
def _english_terms() -> dict[str, tuple[str, str] | None]:
    """Token -> `_english_term(token)`, filled as tokens come (cleared when full)."""
    return {}


def _english_term(token: str) -> tuple[str, str] | None:
    bare = _bare(token)
    word = _english_word(bare)
    return (word, bare) if word and len(word) <= MAX_CONCEPT_LENGTH else None


def _bare(token: str) -> str:
    """The token without the punctuation around it ("timeout." -> "timeout"), a name ending
    in ++ or # (c++, c#) aside."""
    return token.strip(".+#-/") if not token.endswith(("++", "#")) else token


def _english_word(token: str) -> str | None:
    """The concept of a bare token: its stem, or the token itself if not all letters."""
    if len(token) < 2 or token in ENGLISH_STOP_WORDS or token.isdigit() and len(token) < 3:
        return None
    if token.isalpha():
        return _stemmer().stemWord(token)  # type: ignore[no-any-return]
    return token


def _compound(word: str, particle: str) -> str | None:
    """'timed' + 'out' -> 'timeout' when that is a common word; None otherwise."""
    if not word.isalpha():
        return None
    return _remembered(_compounds(), (word, particle), lambda pair: _compound_of(*pair))


@functools.cache
def _compounds() -> dict[tuple[str, str], str | None]:
    """(word, particle) -> `_compound_of` them: "in" follows a word in most sentences, and
    each try is up to three look-ups of microseconds in the frequency table (cleared when
    full)."""
    return {}


def _compound_of(word: str, particle: str) -> str | None:
    """`_compound`, looked up in the frequency table."""
    frequencies = _english_frequencies()
    threshold = 10 ** (COMPOUND_MIN_ZIPF - 9)
    for base in dict.fromkeys((word, _stemmer().stemWord(word), _verb_base(word))):
        joined = base + particle
        if frequencies.get(joined, 0.0) >= threshold:
            return joined
    return None


def _verb_base(word: str) -> str:
    """'timed' -> 'time', 'logged' -> 'log', 'setting' -> 'set': enough to try a compound."""
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                return stem[:-1]
            return stem
    return word
