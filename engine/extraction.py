"""Concepts from text, run when an event is appended (never during the fold).

English words are case-folded, stop words dropped and inflections folded with
the Snowball stemmer; runs of Chinese characters are cut with jieba, whose
dictionary ships inside the package.
"""

from __future__ import annotations

import functools
import re

import Stemmer

from .concept import MAX_CONCEPT_LENGTH, normalise_concept

EXTRACTOR_VERSION = "words-1"
"""Stored in each event, so a replay can tell which extractor made its concepts."""

_TOKEN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]+|[^\W_][\w.+#-]*", re.UNICODE)
_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")

ENGLISH_STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves let lets get got use used using make made may might must shall""".split()
)
CHINESE_STOP_WORDS = frozenset(
    "的 了 和 是 在 也 有 就 不 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 这 那 之 为 以 于 上 下 中 对 把 被 让 从 到 但 并 等".split()
)


@functools.cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@functools.cache
def _jieba():  # type: ignore[no-untyped-def]
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def extract_concepts(text: str, limit: int = 32) -> tuple[str, ...]:
    """The distinct concepts of `text`, in first-seen order, at most `limit`."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(normalise_concept(text)):
        for concept in _concepts_of_token(token):
            if len(concept) <= MAX_CONCEPT_LENGTH:
                seen.setdefault(concept, None)
        if len(seen) >= limit:
            break
    return tuple(seen)[:limit]


def _concepts_of_token(token: str) -> list[str]:
    if _CJK.match(token):
        words = _jieba().lcut(token)
        return [w for w in words if len(w) > 1 and w not in CHINESE_STOP_WORDS]
    token = token.strip(".+#-") if not token.endswith(("++", "#")) else token
    if len(token) < 2 or token in ENGLISH_STOP_WORDS or token.isdigit() and len(token) < 3:
        return []
    if token.isalpha():
        return [_stemmer().stemWord(token)]
    return [token]
