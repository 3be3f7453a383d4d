"""A question's text -> the query a read runs: its time expression and its content concepts.

Words that only frame a question ("what kind of", "how many", "when did ... start",
多少, 什么时候) carry no content and are dropped; words asking for the newest memories
("latest", "recently", 最近) set the query's recency preference instead. A year or a month
named by the time expression stays a concept too: memories about that time may have been
written at another.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from datetime import datetime

from assocmem.engine.recall.recall import Query, TimeRange
from assocmem.engine.text.extraction import DEFAULT_LIMIT, extract_concepts
from assocmem.engine.text.timeexpr import AUTO_TIME_THRESHOLD, TimeMatch, parse_time

QUESTION_WORDS = frozenset(
    """what when where which who whom whose why how whats kind kinds type types sort sorts
    many much long often ever time times thing things something anything stuff way ways
    happen happened happens tell told know knew remember recall think thought say said says
    mention mentioned mentions talk talked discuss discussed describe described feel felt
    start started please anyone someone specific particular since""".split()
)
"""English words that frame a question; dropped from a question's concepts (not from notes)."""
RECENCY_WORDS = frozenset("latest recent recently lately newest last nowadays".split())
"""English words asking for the newest memories."""
CHINESE_QUESTION_WORDS = frozenset(
    """什么 什么样 什么时候 时候 何时 何地 何人 哪 哪个 哪些 哪里 哪儿 哪一年 哪年 哪位 哪种
    哪家 哪一个 谁 多少 多 几 几个 几年 几次 怎样 怎么 怎么样 如何 为什么 为何 是否 是不是
    多久 多长 吗 呢 请问 做 叫 地方 意思 作用 特点""".split()
)
"""Chinese interrogatives and question frames (什么时候, 有什么作用, 叫什么)."""
QUESTION_LIMIT = 2 * DEFAULT_LIMIT
"""Words read from a question before its question words are dropped (at most DEFAULT_LIMIT
concepts remain)."""
CHINESE_RECENCY_WORDS = frozenset("最近 最新 近来 近期 目前 当前 现在".split())

_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2\d\d\d)(?!\d)")
MONTHS = "january february march april june july august september october november december"
"""Month names that name a time in a question ("may" is left out: mostly a verb)."""
_MONTH_NAME = re.compile(rf"\b({'|'.join(MONTHS.split())})\b", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, slots=True)
class Question:
    concepts: tuple[str, ...]
    time: TimeMatch | None
    """The time expression found in the text, applied or not."""
    is_time_applied: bool
    time_concepts: tuple[str, ...] = ()
    """Concepts naming the time (a year, a month; of a time not applied, the numbers and
    month names of its expression), also among `concepts`."""
    prefers_recent: bool = False

    @property
    def time_range(self) -> TimeRange | None:
        """The range of the time expression found, applied or not."""
        if self.time is None:
            return None
        return TimeRange(self.time.start.timestamp(), self.time.end.timestamp())

    @property
    def hint(self) -> TimeRange | None:
        """The range of a time expression found and not applied (Query.time_hint)."""
        return None if self.is_time_applied else self.time_range


def question_words() -> frozenset[str]:
    """Every dropped question word, in the form extraction gives it (stems, jieba words)."""
    return _dropped()[0]


def parse_question(text: str, now: datetime, auto_time: bool = True) -> Question:
    match = parse_time(text, now) if auto_time else None
    applied = match is not None and match.confidence >= AUTO_TIME_THRESHOLD
    rest = match.without(text) if applied and match is not None else text
    named = _time_concepts(match.expression) if applied and match is not None else ()
    dropped, recency = _dropped()
    found = extract_concepts(rest, QUESTION_LIMIT) if rest.strip() else ()
    concepts = tuple(dict.fromkeys(c for c in (*found, *named) if c not in dropped))[:DEFAULT_LIMIT]
    if match is not None and not applied:
        named = tuple(c for c in _date_concepts(match.expression) if c in concepts)
    prefers_recent = any(c in recency for c in found)
    return Question(concepts, match, applied, named, prefers_recent)


def read_query(text: str, now: datetime, auto_time: bool = True, **options: object) -> Query | None:
    """The Query the API runs for question `text` at `now` (None when nothing is left to ask)."""
    question = parse_question(text, now, auto_time)
    time_range = question.time_range if question.is_time_applied else None
    if not question.concepts and time_range is None:
        return None
    return Query(
        question.concepts,
        now=now.timestamp(),
        time_range=time_range,
        time_hint=question.hint,
        time_concepts=question.time_concepts,
        prefers_recent=question.prefers_recent,
        **options,  # type: ignore[arg-type]
    )


def _time_concepts(expression: str) -> tuple[str, ...]:
    words = _YEAR.findall(expression) + _MONTH_NAME.findall(expression)
    return tuple(c for w in words for c in extract_concepts(w)[:1])


def _date_concepts(expression: str) -> list[str]:
    """The concepts of a time expression that name a date: numbers and month names."""
    months = _month_concepts()
    return [c for c in extract_concepts(expression) if c in months or any(map(str.isdigit, c))]


@functools.cache
def _month_concepts() -> frozenset[str]:
    return frozenset(c for name in MONTHS.split() for c in extract_concepts(name)[:1])


@functools.cache
def _dropped() -> tuple[frozenset[str], frozenset[str]]:
    """(question and recency words, recency words) as extraction gives them."""
    question = {c for w in QUESTION_WORDS for c in extract_concepts(w)} | CHINESE_QUESTION_WORDS
    recency = {c for w in RECENCY_WORDS for c in extract_concepts(w)} | CHINESE_RECENCY_WORDS
    return frozenset(question | recency), frozenset(recency)
