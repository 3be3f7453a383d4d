import pytest

from assocmem.engine.text.word_table import WordTable


def test_a_word_reads_its_value_and_an_unknown_word_the_default() -> None:
    table = WordTable(["timeout", "backoff"], [2.5, 7.0])
    assert table.get("timeout", 0.0) == 2.5
    assert table.get("backoff", 0.0) == 7.0
    assert table.get("retry", -1.0) == -1.0
    assert len(table) == 2


def test_a_word_given_twice_keeps_its_last_value_as_a_dict_would() -> None:
    table = WordTable(["redis", "stream", "redis"], [1.0, 2.0, 3.0])
    assert table.get("redis", 0.0) == 3.0
    assert len(table) == 2


def test_words_whose_internal_buffers_match_do_not_share_a_value() -> None:
    # CPython hashes a str's buffer: "kp" (Latin-1) and "火" (UCS-2 0x706B) have the same bytes.
    assert hash("kp") == hash("火")
    table = WordTable(["火"], [9.0])
    assert table.get("kp", 0.0) == 0.0
    assert table.get("火", 0.0) == 9.0


def test_an_empty_table_reads_every_word_as_the_default() -> None:
    table = WordTable([], [])
    assert table.get("anything", 4.0) == 4.0
    assert len(table) == 0


def test_many_words_at_once_read_what_each_reads_alone() -> None:
    table = WordTable(["timeout", "backoff", "超时"], [2.5, 7.0, 9.5])
    words = ["backoff", "retry", "超时", "timeout", "backoff", "zzz"]
    assert list(table.get_many(words, -1.0)) == [table.get(w, -1.0) for w in words]
    assert list(table.get_many(words, -1.0)) == [7.0, -1.0, 9.5, 2.5, 7.0, -1.0]
    assert len(table.get_many([], -1.0)) == 0
    assert list(WordTable([], []).get_many(["a", "b"], 3.0)) == [3.0, 3.0]


def test_words_and_values_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 words but 1 values"):
        WordTable(["timeout", "backoff"], [2.5])
