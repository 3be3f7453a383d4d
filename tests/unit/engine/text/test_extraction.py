from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.concept import MAX_CONCEPT_LENGTH, normalise_concept, normalise_concepts
from assocmem.engine.text.extraction import (
    _ASCII_TOKEN,
    _TOKEN,
    PARTICLES,
    _ascii_terms,
    _chinese_idf,
    _english_frequencies,
    _loaded_once,
    _terms_by_token,
    extract,
    extract_concepts,
    given_concepts,
)
from tests.texts import sample_texts


def test_english_inflections_meet_and_stop_words_go() -> None:
    assert extract_concepts("The timeouts") == extract_concepts("a timeout") == ("timeout",)


@given(
    st.text(alphabet=st.characters(max_codepoint=127))
    | st.from_regex(r"[a-z0-9_.+#/ -]*", fullmatch=True)
)
@settings(max_examples=300)
def test_ascii_text_is_cut_into_the_same_tokens_by_the_ascii_pattern(text: str) -> None:
    assert _ASCII_TOKEN.findall(text) == _TOKEN.findall(text)


WORDS = sorted(PARTICLES) + [
    "timed", "set", "back", "turn", "roll", "log", "sign", "shut", "clean", "check", "fall",
    "the", "a", "fix", "Retries", "foo.bar", "c++", "x", "42", "2024", "v1.2", "-", "q" * 70,
    "lock" * 12, "the" + "x" * MAX_CONCEPT_LENGTH,
]  # fmt: skip
"""Words that join with a particle ("timed out", "set up", "log in", "back up"), stop
words, identifiers, numbers, words too long to be a concept, and the particles."""


@given(
    st.lists(
        st.tuples(st.sampled_from(WORDS), st.sampled_from(["", ".", "-", "/", "..", ".-/", ","])),
        max_size=40,
    )
)
@settings(max_examples=400, deadline=None)  # the first loads the frequency table
def test_ascii_tokens_give_the_terms_a_step_per_token_gives(words: list[tuple[str, str]]) -> None:
    """The whole-list passes of ASCII text and the token loop that Han text takes: the same
    terms, particles joined to the word before them (once), punctuation and all."""
    tokens = _ASCII_TOKEN.findall(normalise_concept(" ".join(w + end for w, end in words)))
    assert _ascii_terms(tokens) == _terms_by_token(tokens, has_han=False)


def test_ascii_text_of_real_notes_gives_the_terms_a_step_per_token_gives() -> None:
    texts = [normalise_concept(t) for t in sample_texts() if t.isascii()]
    assert len(texts) > 50
    for text in texts:
        tokens = _ASCII_TOKEN.findall(text)
        assert _ascii_terms(tokens) == _terms_by_token(tokens, has_han=False), text


def test_chinese_is_cut_into_words_from_the_packaged_dictionary() -> None:
    concepts = extract_concepts("我们讨论了数据库的超时问题")
    assert "数据库" in concepts and "超时" in concepts and "的" not in concepts


def test_identifiers_are_kept_whole() -> None:
    assert {"c++", "v1.2"} <= set(extract_concepts("upgrade C++ to v1.2"))


def test_explicit_concepts_are_normalised_and_deduplicated() -> None:
    assert normalise_concepts([" Redis ", "redis", "Event  Log", ""]) == ("redis", "event log")


def test_a_named_concept_takes_the_form_extraction_gives_its_word() -> None:
    """A note tagged "Timeouts" is found by the text "timed out", and the reverse."""
    assert given_concepts(["Timeouts", "timed out", "timeout"]) == extract_concepts("timed out")
    assert given_concepts(["Staging", "C++", "2024"]) == extract_concepts("staging C++ 2024")


def test_a_named_concept_extraction_would_drop_or_split_is_kept_as_given() -> None:
    assert given_concepts(["a", "B", "the", "42"]) == ("a", "b", "the", "42")
    assert given_concepts(["Machine  Learning", "机器学习"]) == ("machine learning", "机器学习")


def test_timeout_timeouts_and_timed_out_meet() -> None:
    assert extract_concepts("timeouts") == extract_concepts("timeout") == ("timeout",)
    assert "timeout" in extract_concepts("the server timed out.")
    assert "timeout" in extract_concepts("it times out")
    assert "setup" in extract_concepts("we set up the cluster")


def test_mixed_chinese_and_english_text() -> None:
    concepts = extract_concepts("Redis 超时之后用 backoff 重试")
    assert concepts == (
        "redi",
        "超时",
        "backoff",
        "重试",
    )  # Snowball folds redis -> redi, as in queries


def test_long_text_is_ranked_into_tiers_with_rare_terms_first() -> None:
    from assocmem.engine.text.extraction import LONG_TEXT, extract

    text = (
        "Refactor the kubernetes operator so the reconcile loop retries on conflict; "
        "the operator now requeues the reconcile with exponential backoff and logs the conflict."
    )
    assert len(text) > LONG_TEXT
    result = extract(text)
    core = result.concepts[: result.core]
    assert 0 < result.core < result.matched < len(result.concepts)
    assert "reconcil" in core or "kubernet" in core
    assert "log" not in core


def test_short_text_is_all_core() -> None:
    result = extract("retry with backoff after a timeout")
    assert result.core == result.matched == len(result.concepts) == 3


def test_numbers_and_identifiers_are_kept_when_meaningful() -> None:
    concepts = extract_concepts("bump fetch_user to 2.5.1 after 404 on port 8080, see #12")
    assert {"fetch_user", "2.5.1", "404", "8080"} <= set(concepts)
    assert "12" not in concepts


def test_chinese_idf_table_is_the_one_jieba_analyse_reads() -> None:
    # We read jieba's idf.txt ourselves (jieba.analyse also loads 50 MB of POS tables);
    # the table and its median must stay what jieba.analyse would give.
    import jieba.analyse

    table, median = _chinese_idf()
    expected = jieba.analyse.default_tfidf.idf_freq
    assert len(table) == len(expected)
    assert all(table.get(word, -1.0) == idf for word, idf in expected.items())
    assert median == jieba.analyse.default_tfidf.median_idf


def test_english_frequencies_are_the_ones_wordfreq_gives() -> None:
    from wordfreq import get_frequency_dict

    table = _english_frequencies()
    expected = get_frequency_dict("en")
    assert len(table) == len(expected)
    assert all(table.get(word, -1.0) == frequency for word, frequency in expected.items())
    assert table.get("qzxv-not-a-word", 0.0) == 0.0


def test_a_word_is_labelled_as_written_without_the_punctuation_around_it() -> None:
    """A sentence's last word used to keep its full stop as the word shown for its concept."""
    assert extract("Retry with backoff after a TIMEOUT.").labels == {"retri": "retry"}
    assert extract("Call the API. Then deploy it.").labels == {}
    assert extract("see U.S.A. today").concepts == ("see", "u.s.a", "today")


def test_what_extraction_remembers_changes_nothing_it_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assocmem.engine.text import extraction

    texts = sample_texts()
    with monkeypatch.context() as forgetful:
        forgetful.setattr(extraction, "ENGLISH_TERMS_KEPT", 5)  # cleared all the time
        fresh = [extraction.extract(t) for t in texts]
        fresh_terms = [extraction.extract_terms(t) for t in texts]
    [extraction.extract(t) for t in texts]  # every token and word seen before from here
    assert [extraction.extract(t) for t in texts] == fresh
    assert [extraction.extract_terms(t) for t in texts] == fresh_terms


def test_a_table_asked_for_by_threads_at_once_is_loaded_once() -> None:
    """The API warms its tables up in a thread while its first writes extract already."""
    loads: list[int] = []
    started = threading.Barrier(4)

    def load() -> object:
        loads.append(1)
        time.sleep(0.2)  # long enough for every thread to ask meanwhile
        return object()

    table = _loaded_once(load)

    def ask() -> object:
        started.wait()
        return table()

    with concurrent.futures.ThreadPoolExecutor(4) as threads:
        tables = list(threads.map(lambda _: ask(), range(4)))
    assert len(loads) == 1
    assert all(t is tables[0] for t in tables)


def test_jieba_loads_its_dictionary_for_the_first_chinese_text_not_before() -> None:
    """69 MB and 0.4 s that a process seeing only English never spends."""
    script = (
        "import jieba\n"
        "from assocmem.engine.text.extraction import extract, warm_up\n"
        "warm_up()\n"
        "extract('Requests to the billing API timed out; we retry with backoff. ' * 3)\n"
        "print(jieba.dt.initialized)\n"
        "print(extract('数据库连接超时以后用指数退避重试').concepts[:3])\n"
        "print(jieba.dt.initialized)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.splitlines() == ["False", "('数据库', '连接', '超时')", "True"]


def test_filler_words_are_no_concepts() -> None:
    assert not {"via", "use"} & set(
        extract_concepts("the proxy forwards requests via nginx and uses TLS")
    )
    chinese = set(extract_concepts("这个问题出现时，新的版本前面的接口出错"))
    assert not {"时", "新", "前", "出", "问题"} & chinese
