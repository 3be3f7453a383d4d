"""A question's text -> its content concepts, time and recency preference."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assocmem.engine.recall.question import parse_question, question_words, read_query

NOW = datetime(2025, 6, 18, 15, 30, tzinfo=UTC)

INTERROGATIVES = [
    ("what kind of dog does Caroline have?", ("dog", "carolin")),
    ("What type of pottery did Melanie make?", ("potteri", "melani")),
    ("how many times did the build fail", ("build", "fail")),
    ("how long has the cache been broken", ("cach", "broken")),
    ("When did Caroline start painting?", ("carolin", "paint")),
    ("how did Melanie feel about the race", ("melani", "race")),
    ("What did she say about the conference?", ("confer",)),
    ("Do you remember anything about the deploy?", ("deploy",)),
    ("谁在什么时候发现了青霉素", ("发现", "青霉素")),
    ("这座桥有多长", ("这座", "桥")),
    ("他担任什么职务", ("担任", "职务")),
    ("哪一年成立了公司", ("成立", "公司")),
    ("艾纳香有什么作用", ("艾纳香",)),
]


@pytest.mark.parametrize("text, concepts", INTERROGATIVES)
def test_interrogatives_and_fillers_are_not_concepts(text, concepts) -> None:
    assert parse_question(text, NOW).concepts == concepts


def test_question_words_are_listed_in_the_form_extraction_gives() -> None:
    words = question_words()
    assert {"kind", "type", "mani", "recent", "long", "time", "start", "feel"} <= words
    assert {"什么", "多少", "哪", "何时", "怎样", "时候"} <= words
    assert "timeout" not in words and "deploy" not in words


def test_a_question_that_asks_for_the_latest_prefers_recent_memories() -> None:
    assert parse_question("what was the latest deploy?", NOW).prefers_recent
    assert parse_question("最近的部署", NOW).prefers_recent
    plain = parse_question("what was the deploy?", NOW)
    assert not plain.prefers_recent and plain.concepts == ("deploy",)


def test_a_year_or_a_month_named_by_an_applied_time_stays_a_concept() -> None:
    year = parse_question("2008年北京举办了什么", NOW)
    assert year.is_time_applied and "2008" in year.concepts and year.time_concepts == ("2008",)
    month = parse_question("what did we launch in March", NOW)
    assert month.is_time_applied and month.time_concepts == ("march",)
    assert set(month.concepts) == {"launch", "march"}
    relative = parse_question("what did we launch last week", NOW)
    assert relative.is_time_applied and relative.time_concepts == ()


def test_a_date_too_unsure_to_apply_is_a_hint_named_by_its_own_concepts() -> None:
    """After a container word ("document") a date may describe content, so it ranks nothing
    first; the memories written that day still carry it (Query.time_hint)."""
    dated = parse_question("add a Code of Conduct document, 2019-09-24", NOW)
    assert not dated.is_time_applied and dated.time_range is not None
    assert dated.hint == dated.time_range and dated.time_concepts == ("2019-09-24",)
    query = read_query("add a Code of Conduct document, 2019-09-24", NOW)
    assert query is not None and query.time_range is None and query.time_hint == dated.hint
    vague = parse_question("the article about last week's launch", NOW)
    assert vague.hint is not None and vague.time_concepts == ()  # "week" names no date
    applied = parse_question("what did we launch in March", NOW)
    assert applied.hint is None and read_query("what did we launch in March", NOW).time_hint is None


def test_a_question_of_question_words_only_asks_nothing() -> None:
    assert read_query("what is it?", NOW) is None
    assert read_query("what happened yesterday?", NOW).concepts == ()  # the time alone
