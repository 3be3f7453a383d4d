"""A memory past its `expires_at` is left out of reads and listings from that moment (the
reader's clock decides: the engine has none), and kept across a snapshot."""

from __future__ import annotations

import pytest

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.recall.listing import Filter, listed
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.visibility import Visibility
from tests.unit.engine.make_events import written


def notes():
    short = written(1, ["billing", "timeout"])
    short.data["expires_at"] = 100.0
    return [short, written(2, ["billing", "retry"])]


def test_an_expired_memory_is_left_out_of_reads_and_listings_from_its_expiry_on() -> None:
    state = fold_from_zero(notes())
    assert state.rows[0].meta == {"expires_at": 100.0}
    for at, expected in ((99.0, {"1-0", "2-0"}), (100.0, {"2-0"}), (None, {"1-0", "2-0"})):
        read = recall(state, Query(("billing",), expired_before=at))
        assert {i.memory.id for i in read.items} == expected
        rows = listed(state, Visibility(everything=True), Filter(expired_before=at), None, 10)
        assert {state.rows[r].id for r in rows} == expected
    loaded = load_state(dump_state(state))
    assert content_hash(loaded) == content_hash(state)
    assert [
        i.memory.id for i in recall(loaded, Query(("billing",), expired_before=200.0)).items
    ] == ["2-0"]


def test_an_expiry_that_is_not_a_finite_time_is_refused() -> None:
    data = dict(written(1, ["a"]).data, expires_at=float("inf"))
    with pytest.raises(InvalidEvent, match="expires_at"):
        MEMORY_WRITTEN.check(data)
