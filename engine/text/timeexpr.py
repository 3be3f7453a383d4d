"""Time expressions in queries (Chinese and English) -> a time range with a confidence.

"what did I do last week" asks for a time range; "the article mentioned last
week's launch" only describes content. The confidence says which: a query verb
or a time word at the start raises it, quotes, description verbs and
container words lower it. Reads apply a range only above a threshold.

Ranges are [start, end) in the caller's time zone; `now` decides "today".
Weeks start on Monday. Pure: no clock is read here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import datetime, timedelta

AUTO_TIME_THRESHOLD = 0.5
BASE_CONFIDENCE = 0.6


@dataclasses.dataclass(frozen=True, slots=True)
class TimeMatch:
    start: datetime
    end: datetime
    confidence: float
    expression: str
    span: tuple[int, int]

    def without(self, text: str) -> str:
        """`text` with the expression cut out (what is left is the topic of the query)."""
        return (text[: self.span[0]] + " " + text[self.span[1] :]).strip()


# --- calendar arithmetic -------------------------------------------------------------------


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int, now: datetime) -> datetime:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _week(now: datetime, back: int = 0) -> tuple[datetime, datetime]:
    start = _day(now) - timedelta(days=now.weekday() + 7 * back)
    return start, start + timedelta(days=7)


def _months_back(now: datetime, back: int, span: int = 1) -> tuple[datetime, datetime]:
    start = _month(now.year, now.month - back, now)
    return start, _month(start.year, start.month + span, now)


def _days_back(now: datetime, back: int, span: int = 1) -> tuple[datetime, datetime]:
    start = _day(now) - timedelta(days=back)
    return start, start + timedelta(days=span)


def _year(now: datetime, year: int) -> tuple[datetime, datetime]:
    return _month(year, 1, now), _month(year + 1, 1, now)


def _date(now: datetime, year: int, month: int, day: int) -> tuple[datetime, datetime]:
    start = _month(year, month, now).replace(day=day)
    return start, start + timedelta(days=1)


def _ago(now: datetime, n: int, unit: str) -> tuple[datetime, datetime]:
    """'3 days ago' is that day; '2 weeks ago' that week; '2 months ago' that month."""
    if unit == "day":
        return _days_back(now, n)
    if unit == "week":
        return _week(now, n)
    if unit == "month":
        return _months_back(now, n)
    return _year(now, now.year - n)


def _recent(now: datetime, n: int, unit: str) -> tuple[datetime, datetime]:
    """'the last 3 days' = today and the 2 days before, up to the end of today."""
    end = _day(now) + timedelta(days=1)
    if unit == "day":
        return end - timedelta(days=n), end
    if unit == "week":
        return end - timedelta(days=7 * n), end
    if unit == "month":
        return _month(now.year, now.month - n + 1, now), end
    return _month(now.year - n + 1, 1, now), end


def _past_month(now: datetime, month: int) -> int:
    """The year of the latest `month` that has begun: in March, 'May' is last year's May."""
    return now.year if month <= now.month else now.year - 1


# --- numbers -------------------------------------------------------------------------------

_CN_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3,
}  # fmt: skip


def _number(text: str) -> int:
    text = " ".join(text.lower().split())
    if text.isdigit():
        return int(text)
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (
            _CN_DIGITS.get(ones, 0) if ones else 0
        )
    return _CN_DIGITS[text]


# --- patterns ------------------------------------------------------------------------------

_CN_NUM = r"(?:\d{1,3}|[一二两三四五六七八九十]{1,3})"
_EN_NUM = (
    r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)"
)
_MONTHS = {
    name: n
    for n, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")"
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
             "个礼拜": "week", "月": "month", "个月": "month", "年": "year"}  # fmt: skip
_EN_UNITS = {"day": "day", "week": "week", "month": "month", "year": "year"}

Handler = Callable[[re.Match[str], datetime], tuple[datetime, datetime]]


def _cn_unit(name: str) -> str:
    return _CN_UNITS[name]


def _en_unit(name: str) -> str:
    return _EN_UNITS[name.lower().rstrip("s")]


def _month_of(name: str) -> int:
    return _MONTHS[name.lower()]


def _cn_month_range(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    first, last = _number(m["m1"]), _number(m["m2"])
    year = int(m["y"]) if m["y"] else now.year if m["this"] else _past_month(now, first)
    return _month(year, first, now), _month(year, last + 1, now)


def _cn_date(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    month = _number(m["m"])
    year = int(m["y"]) if m["y"] else now.year if m["this"] else _past_month(now, month)
    if m["d"]:
        return _date(now, year, month, _number(m["d"]))
    return _month(year, month, now), _month(year, month + 1, now)


def _en_between(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    first, last = _month_of(m["m1"]), _month_of(m["m2"])
    year = int(m["y"]) if m["y"] else _past_month(now, first)
    return _month(year, first, now), _month(year if last >= first else year + 1, last + 1, now)


def _en_month(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    month = _month_of(m["m"])
    year = int(m["y"]) if m["y"] else _past_month(now, month)
    day = m.groupdict().get("d")
    if day:
        return _date(now, year, month, int(day))
    return _month(year, month, now), _month(year, month + 1, now)


def _en_day_month(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    month = _month_of(m["m"])
    year = int(m["y"]) if m["y"] else _past_month(now, month)
    return _date(now, year, month, int(m["d"]))


def _en_since(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    month = _month_of(m["m"])
    year = int(m["y"]) if m["y"] else _past_month(now, month)
    return _month(year, month, now), _day(now) + timedelta(days=1)


def _iso(m: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    return _date(now, int(m["y"]), int(m["m"]), int(m["d"]))


_PATTERNS: list[tuple[str, Handler]] = [
    # Chinese, most specific first
    (rf"(?:(?P<y>\d{{4}})年|(?P<this>今年))?(?P<m1>{_CN_NUM})月(?:份)?(?:到|至|~|-|—)(?P<m2>{_CN_NUM})月(?:份)?", _cn_month_range),
    (rf"(?:(?P<y>\d{{4}})年|(?P<this>今年))?(?P<m>{_CN_NUM})月(?:份)?(?:(?P<d>{_CN_NUM})[日号])?", _cn_date),
    (r"(?P<y>\d{4})年", lambda m, now: _year(now, int(m["y"]))),
    (r"大前天", lambda m, now: _days_back(now, 3)),
    (r"前天", lambda m, now: _days_back(now, 2)),
    (r"昨天|昨日", lambda m, now: _days_back(now, 1)),
    (r"今天|今日", lambda m, now: _days_back(now, 0)),
    (r"上上(?:个)?(?:周|星期|礼拜)", lambda m, now: _week(now, 2)),
    (r"上(?:个)?(?:周|星期|礼拜)", lambda m, now: _week(now, 1)),
    (r"(?:本|这)(?:个)?(?:周|星期|礼拜)", lambda m, now: _week(now, 0)),
    (r"上上个月", lambda m, now: _months_back(now, 2)),
    (r"上(?:个)?月", lambda m, now: _months_back(now, 1)),
    (r"(?:本|这个)月", lambda m, now: _months_back(now, 0)),
    (rf"前(?P<n>{_CN_NUM})(?P<u>个月)", lambda m, now: _months_back(now, _number(m["n"]), _number(m["n"]))),
    (rf"(?:最近|近|过去)(?P<n>{_CN_NUM})(?P<u>天|日|周|个星期|个礼拜|个月|年)", lambda m, now: _recent(now, _number(m["n"]), _cn_unit(m["u"]))),
    (rf"(?P<n>{_CN_NUM})(?P<u>天|周|个星期|个礼拜|个月|年)(?:以)?前", lambda m, now: _ago(now, _number(m["n"]), _cn_unit(m["u"]))),
    (r"前年", lambda m, now: _year(now, now.year - 2)),
    (r"去年", lambda m, now: _year(now, now.year - 1)),
    (r"今年", lambda m, now: _year(now, now.year)),
    # English
    (r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", _iso),
    (rf"\b(?:between|from)\s+(?P<m1>{_MONTH})\s+(?:and|to|until|till)\s+(?P<m2>{_MONTH})(?:\s+(?:of\s+)?(?P<y>\d{{4}}))?\b", _en_between),
    (rf"\bsince\s+(?P<m>{_MONTH})(?:\s+(?P<y>\d{{4}}))?\b", _en_since),
    (rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH})(?:,?\s+(?P<y>\d{{4}}))?\b", _en_day_month),
    (rf"\b(?:in\s+|during\s+)?(?P<m>{_MONTH})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b", _en_month),
    (rf"\b(?:in|during|since|of)\s+(?P<m>{_MONTH})(?:\s+(?P<y>\d{{4}}))?\b(?!\s*\d)", _en_month),
    (rf"\b(?P<m>{_MONTH})\s+(?P<y>\d{{4}})\b", _en_month),
    (r"\bthe\s+day\s+before\s+yesterday\b", lambda m, now: _days_back(now, 2)),
    (r"\byesterday\b", lambda m, now: _days_back(now, 1)),
    (r"\btoday\b", lambda m, now: _days_back(now, 0)),
    (r"\bthe\s+week\s+before\s+last\b", lambda m, now: _week(now, 2)),
    (r"\blast\s+week\b", lambda m, now: _week(now, 1)),
    (r"\bthis\s+week\b", lambda m, now: _week(now, 0)),
    (r"\bthe\s+month\s+before\s+last\b", lambda m, now: _months_back(now, 2)),
    (r"\blast\s+month\b", lambda m, now: _months_back(now, 1)),
    (r"\bthis\s+month\b", lambda m, now: _months_back(now, 0)),
    (r"\blast\s+year\b", lambda m, now: _year(now, now.year - 1)),
    (r"\bthis\s+year\b", lambda m, now: _year(now, now.year)),
    (rf"\b(?:in\s+the\s+|over\s+the\s+|the\s+)?(?:last|past|previous)\s+(?P<n>{_EN_NUM})\s+(?P<u>days?|weeks?|months?|years?)\b", lambda m, now: _recent(now, _number(m["n"]), _en_unit(m["u"]))),
    (rf"\b(?P<n>{_EN_NUM})\s+(?P<u>days?|weeks?|months?|years?)\s+ago\b", lambda m, now: _ago(now, _number(m["n"]), _en_unit(m["u"]))),
    (r"\b(?:in|during|since)\s+(?P<y>(?:19|20)\d{2})\b", lambda m, now: _year(now, int(m["y"])) if not m[0].startswith("since") else (_year(now, int(m["y"]))[0], _day(now) + timedelta(days=1))),
]  # fmt: skip
_COMPILED = [(re.compile(p, re.IGNORECASE), h) for p, h in _PATTERNS]

_QUERY_WORDS = re.compile(
    r"\b(?:what|when|which|who|did|do|show|find|list|recall|remember|summari[sz]e|tell me)\b"
    r"|什么|哪些|哪个|做了|干了|查|找|回顾|看看|列出|总结|记得|有没有|吗",
    re.IGNORECASE,
)
_DESCRIPTION = re.compile(
    r"\b(?:mentioned|mentions|said|says|wrote|writes|described|describes|reported|reports|"
    r"discussed|discusses|talked about|covered|covers)\b|提到|提及|说过|写道|报道|讲到|描述",
    re.IGNORECASE,
)
_CONTAINERS = re.compile(
    r"\b(?:article|post|paper|book|report|email|letter|document|story|news|video)\b"
    r"|文章|报告|新闻|书里|书中|邮件|文档|视频|报道",
    re.IGNORECASE,
)
_QUOTES = ('""', "“”", "「」", "『』", "‘’")


def parse_time(text: str, now: datetime) -> TimeMatch | None:
    """The most specific time expression in `text`, with its range and confidence."""
    for pattern, handler in _COMPILED:
        match = pattern.search(text)
        if match is None:
            continue
        try:
            start, end = handler(match, now)
        except (ValueError, KeyError):
            continue  # "2月30日", "13月": not a date
        span = match.span()
        return TimeMatch(start, end, _confidence(text, span), match[0], span)
    return None


def _confidence(text: str, span: tuple[int, int]) -> float:
    confidence = BASE_CONFIDENCE
    before, after = text[: span[0]], text[span[1] :]
    if _QUERY_WORDS.search(text):
        confidence += 0.2
    if not re.sub(r"[\W_]+", "", before) or re.fullmatch(
        r"\s*(?:in|during|since|on|我|我们)\s*", before, re.I
    ):
        confidence += 0.15
    if _DESCRIPTION.search(before[-30:]):
        confidence -= 0.35
    if _CONTAINERS.search(text):
        confidence -= 0.2
    if re.match(r"\s*'s\b|\s*的(?:文章|报道|新闻|报告)", after):
        confidence -= 0.1
    if _quoted(before, after):
        confidence -= 0.4
    return round(min(1.0, max(0.0, confidence)), 2)


def _quoted(before: str, after: str) -> bool:
    for opening, closing in _QUOTES:
        if closing not in after:
            continue
        if opening == closing and before.count(opening) % 2 == 1:
            return True
        if opening != closing and before.rfind(opening) > before.rfind(closing):
            return True
    return False
