"""Time expressions, table-driven: (query, expected [start, end) as dates, applied at the default threshold).

`now` is Wednesday 2025-06-18 15:30 UTC; weeks start on Monday (this week: 06-16 .. 06-23).
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from assocmem.engine.text.timeexpr import AUTO_TIME_THRESHOLD, parse_time

NOW = datetime(2025, 6, 18, 15, 30, tzinfo=UTC)

WEEK = ("2025-06-16", "2025-06-23")
LAST_WEEK = ("2025-06-09", "2025-06-16")
WEEK_BEFORE_LAST = ("2025-06-02", "2025-06-09")
MONTH = ("2025-06-01", "2025-07-01")
LAST_MONTH = ("2025-05-01", "2025-06-01")
YEAR = ("2025-01-01", "2026-01-01")
LAST_YEAR = ("2024-01-01", "2025-01-01")

CASES = [
    # Chinese: days
    ("今天", ("2025-06-18", "2025-06-19"), True),
    ("今天做了什么", ("2025-06-18", "2025-06-19"), True),
    ("今日的会议", ("2025-06-18", "2025-06-19"), True),
    ("昨天", ("2025-06-17", "2025-06-18"), True),
    ("昨天我做了什么", ("2025-06-17", "2025-06-18"), True),
    ("我昨天修了哪些bug", ("2025-06-17", "2025-06-18"), True),
    ("昨日", ("2025-06-17", "2025-06-18"), True),
    ("前天", ("2025-06-16", "2025-06-17"), True),
    ("前天的部署", ("2025-06-16", "2025-06-17"), True),
    ("大前天", ("2025-06-15", "2025-06-16"), True),
    ("三天前", ("2025-06-15", "2025-06-16"), True),
    ("3天前", ("2025-06-15", "2025-06-16"), True),
    ("十天前", ("2025-06-08", "2025-06-09"), True),
    ("二十天前", ("2025-05-29", "2025-05-30"), True),
    ("最近三天", ("2025-06-16", "2025-06-19"), True),
    ("最近三天的日志", ("2025-06-16", "2025-06-19"), True),
    ("近7天", ("2025-06-12", "2025-06-19"), True),
    ("过去两天", ("2025-06-17", "2025-06-19"), True),
    # Chinese: weeks
    ("上周", LAST_WEEK, True),
    ("上周我们讨论了什么", LAST_WEEK, True),
    ("上个星期", LAST_WEEK, True),
    ("上星期", LAST_WEEK, True),
    ("上个礼拜", LAST_WEEK, True),
    ("上上周", WEEK_BEFORE_LAST, True),
    ("上上个星期", WEEK_BEFORE_LAST, True),
    ("本周", WEEK, True),
    ("这周", WEEK, True),
    ("这个星期", WEEK, True),
    ("两周前", WEEK_BEFORE_LAST, True),
    ("一周前", LAST_WEEK, True),
    ("过去两周", ("2025-06-05", "2025-06-19"), True),
    ("最近一周", ("2025-06-12", "2025-06-19"), True),
    # Chinese: months and years
    ("本月", MONTH, True),
    ("这个月", MONTH, True),
    ("上个月", LAST_MONTH, True),
    ("上月", LAST_MONTH, True),
    ("上个月的报销", LAST_MONTH, True),
    ("上上个月", ("2025-04-01", "2025-05-01"), True),
    ("前两个月", ("2025-04-01", "2025-06-01"), True),
    ("前三个月", ("2025-03-01", "2025-06-01"), True),
    ("一个月前", LAST_MONTH, True),
    ("两个月前", ("2025-04-01", "2025-05-01"), True),
    ("最近三个月", ("2025-04-01", "2025-06-19"), True),
    ("近两个月", ("2025-05-01", "2025-06-19"), True),
    ("今年", YEAR, True),
    ("去年", LAST_YEAR, True),
    ("前年", ("2023-01-01", "2024-01-01"), True),
    ("一年前", LAST_YEAR, True),
    ("2024年", LAST_YEAR, True),
    ("2024年的项目", LAST_YEAR, True),
    # Chinese: dates and ranges
    ("今年5月3日", ("2025-05-03", "2025-05-04"), True),
    ("5月3日", ("2025-05-03", "2025-05-04"), True),
    ("5月3号", ("2025-05-03", "2025-05-04"), True),
    ("五月三日", ("2025-05-03", "2025-05-04"), True),
    ("2024年5月3日", ("2024-05-03", "2024-05-04"), True),
    ("2024年5月", ("2024-05-01", "2024-06-01"), True),
    ("今年5月", ("2025-05-01", "2025-06-01"), True),
    ("8月", ("2024-08-01", "2024-09-01"), True),
    ("十二月", ("2024-12-01", "2025-01-01"), True),
    ("三月份", ("2025-03-01", "2025-04-01"), True),
    ("今年5月到8月", ("2025-05-01", "2025-09-01"), True),
    ("5月到8月", ("2025-05-01", "2025-09-01"), True),
    ("9月到11月", ("2024-09-01", "2024-12-01"), True),  # the latest that has begun
    ("2024年3月至5月", ("2024-03-01", "2024-06-01"), True),
    ("今年十月", ("2025-10-01", "2025-11-01"), True),
    # English: days
    ("today", ("2025-06-18", "2025-06-19"), True),
    ("what did I do today", ("2025-06-18", "2025-06-19"), True),
    ("yesterday", ("2025-06-17", "2025-06-18"), True),
    ("Yesterday's deploy", ("2025-06-17", "2025-06-18"), True),
    ("what did I fix yesterday", ("2025-06-17", "2025-06-18"), True),
    ("the day before yesterday", ("2025-06-16", "2025-06-17"), True),
    ("3 days ago", ("2025-06-15", "2025-06-16"), True),
    ("three days ago", ("2025-06-15", "2025-06-16"), True),
    ("a day ago", ("2025-06-17", "2025-06-18"), True),
    ("10 days ago", ("2025-06-08", "2025-06-09"), True),
    ("in the last 3 days", ("2025-06-16", "2025-06-19"), True),
    ("the past two days", ("2025-06-17", "2025-06-19"), True),
    ("over the last seven days", ("2025-06-12", "2025-06-19"), True),
    # English: weeks
    ("last week", LAST_WEEK, True),
    ("what did we decide last week", LAST_WEEK, True),
    ("show me last week", LAST_WEEK, True),
    ("this week", WEEK, True),
    ("the week before last", WEEK_BEFORE_LAST, True),
    ("2 weeks ago", WEEK_BEFORE_LAST, True),
    ("a week ago", LAST_WEEK, True),
    ("two weeks ago", WEEK_BEFORE_LAST, True),
    ("past two weeks", ("2025-06-05", "2025-06-19"), True),
    ("in the last couple of weeks", ("2025-06-05", "2025-06-19"), True),
    # English: months and years
    ("last month", LAST_MONTH, True),
    ("this month", MONTH, True),
    ("the month before last", ("2025-04-01", "2025-05-01"), True),
    ("a month ago", LAST_MONTH, True),
    ("2 months ago", ("2025-04-01", "2025-05-01"), True),
    ("last 3 months", ("2025-04-01", "2025-06-19"), True),
    ("past six months", ("2025-01-01", "2025-06-19"), True),
    ("last year", LAST_YEAR, True),
    ("this year", YEAR, True),
    ("two years ago", ("2023-01-01", "2024-01-01"), True),
    ("in 2024", LAST_YEAR, True),
    ("during 2023", ("2023-01-01", "2024-01-01"), True),
    ("since 2024", ("2024-01-01", "2025-06-19"), True),
    # English: months by name, dates, ranges
    ("in May", ("2025-05-01", "2025-06-01"), True),
    ("in August", ("2024-08-01", "2024-09-01"), True),
    ("during July", ("2024-07-01", "2024-08-01"), True),
    ("in May 2024", ("2024-05-01", "2024-06-01"), True),
    ("May 2024", ("2024-05-01", "2024-06-01"), True),
    ("notes from March 2023", ("2023-03-01", "2023-04-01"), True),
    ("May 3", ("2025-05-03", "2025-05-04"), True),
    ("May 3rd, 2024", ("2024-05-03", "2024-05-04"), True),
    ("3 May 2024", ("2024-05-03", "2024-05-04"), True),
    ("the 21st of March", ("2025-03-21", "2025-03-22"), True),
    ("on 2024-05-03", ("2024-05-03", "2024-05-04"), True),
    ("since March", ("2025-03-01", "2025-06-19"), True),
    ("since March 2024", ("2024-03-01", "2025-06-19"), True),
    ("between May and August 2024", ("2024-05-01", "2024-09-01"), True),
    ("from May to August", ("2025-05-01", "2025-09-01"), True),
    ("between November and February", ("2024-11-01", "2025-03-01"), True),
    # Descriptions, quotes and containers: found, but not applied
    ("the article mentioned last week's launch", LAST_WEEK, False),
    ("the report said yesterday's outage was short", ("2025-06-17", "2025-06-18"), False),
    ('the phrase "last week" in the changelog', LAST_WEEK, False),
    ("文章提到上周的会议", LAST_WEEK, False),
    ("新闻报道了昨天的事故", ("2025-06-17", "2025-06-18"), False),
    ("“上周”这个词的用法", LAST_WEEK, False),
    ("邮件里说过去年的预算", LAST_YEAR, False),
]

NO_TIME = [
    "may I ask about timeouts",
    "retry with backoff after a timeout",
    "fix the build on arm64",
    "我喜欢数据库",
    "version 2.5.1 of the parser",
    "a 3 day workshop",
    "超时之后重试",
    "weekly report template",
    "monthly billing",
    "the mayor of the town",
]


def _dates(match) -> tuple[str, str]:
    return (match.start.date().isoformat(), match.end.date().isoformat())


@pytest.mark.parametrize("text, expected, applied", CASES, ids=[c[0] for c in CASES])
def test_expression_gives_its_range_and_confidence(text, expected, applied) -> None:
    match = parse_time(text, NOW)
    assert match is not None, text
    assert _dates(match) == expected
    assert (match.confidence >= AUTO_TIME_THRESHOLD) == applied, match.confidence


@pytest.mark.parametrize("text", NO_TIME)
def test_text_without_a_time_expression_gives_none(text) -> None:
    assert parse_time(text, NOW) is None


def test_a_query_verb_or_a_leading_time_word_raises_confidence() -> None:
    plain = parse_time("notes last week", NOW).confidence
    assert parse_time("last week notes", NOW).confidence > plain
    assert parse_time("what notes last week", NOW).confidence > plain


def test_cutting_the_expression_leaves_the_topic() -> None:
    match = parse_time("what did I fix yesterday about timeouts", NOW)
    assert (
        match.without("what did I fix yesterday about timeouts")
        == "what did I fix   about timeouts"
    )
    assert date.fromisoformat(_dates(match)[0]) == date(2025, 6, 17)


def test_at_least_a_hundred_cases_across_both_languages() -> None:
    chinese = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c[0])]
    assert len(CASES) + len(NO_TIME) >= 100
    assert len(chinese) >= 40 and len(CASES) - len(chinese) >= 40
