"""Query concepts meet the state's concepts: exactly, as near misses, or, for a Chinese word
the state does not know, as the known words it is made of."""

from __future__ import annotations

from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.recall.match import resolve
from assocmem.engine.recall.recall import Query, recall
from tests.unit.engine.make_events import written


def test_an_unknown_chinese_word_is_cut_into_the_known_words_it_is_made_of() -> None:
    state = fold_from_zero([written(1, ["公司", "总部", "嘉义市"]), written(2, ["公司", "午餐"])])
    matches = resolve(state, ("公司总部",))
    assert [(m.query, m.name, m.is_exact) for m in matches] == [
        ("公司", "公司", True),
        ("总部", "总部", True),
    ]
    found = recall(state, Query(("公司总部",), depth="fast"))
    assert [item.memory.id for item in found.items] == ["1-0", "2-0"]  # both words first


def test_a_known_chinese_word_is_matched_whole() -> None:
    state = fold_from_zero([written(1, ["公司总部"]), written(2, ["公司", "总部"])])
    assert [m.name for m in resolve(state, ("公司总部",))] == ["公司总部"]
