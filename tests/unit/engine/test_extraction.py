from __future__ import annotations

from assocmem.engine.concept import normalise_concepts
from assocmem.engine.extraction import extract_concepts


def test_english_inflections_meet_and_stop_words_go() -> None:
    assert extract_concepts("The timeouts") == extract_concepts("a timeout") == ("timeout",)


def test_chinese_is_cut_into_words_from_the_packaged_dictionary() -> None:
    concepts = extract_concepts("我们讨论了数据库的超时问题")
    assert "数据库" in concepts and "超时" in concepts and "的" not in concepts


def test_identifiers_are_kept_whole() -> None:
    assert {"c++", "v1.2"} <= set(extract_concepts("upgrade C++ to v1.2"))


def test_explicit_concepts_are_normalised_and_deduplicated() -> None:
    assert normalise_concepts([" Redis ", "redis", "Event  Log", ""]) == ("redis", "event log")
