"""A snapshot split into its rows' texts and concepts and the rest (engine/snapshot/rows_apart.py):
loaded back together it is the same state, and every later snapshot of the same log
starts with the same rows, which is what lets snapshot rungs keep them once."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.snapshot.codec import RowsApart, content_hash, dump_state, load_state
from assocmem.engine.snapshot.delta import encode_delta, load_snapshot
from assocmem.engine.snapshot.frames import UNPACKED_MAGIC
from assocmem.engine.snapshot.rows_apart import SplitRows, split_rows
from tests.unit.engine.make_events import acceptance_notes
from tests.unit.engine.state.test_fold_properties import histories


def _apart(split: SplitRows) -> RowsApart:
    return RowsApart(UNPACKED_MAGIC + b"".join(split.rest), split.text, split.concepts)


def test_a_snapshot_split_loads_back_as_the_same_state() -> None:
    state = fold_from_zero(acceptance_notes())
    split = split_rows(dump_state(state))
    assert split.start == 0 and len(split.text_lengths) == len(state.rows)
    assert b"a b note 1" in split.text.tobytes()
    assert b"a b note 1" not in b"".join(split.rest)  # the rest holds no text
    assert content_hash(load_state(_apart(split))) == content_hash(state)


def test_a_rest_given_other_rows_or_still_holding_its_own_is_refused() -> None:
    split = split_rows(dump_state(fold_from_zero(acceptance_notes())))
    with pytest.raises(CorruptSnapshot):  # a row's text cut short
        load_state(dataclasses.replace(_apart(split), text=split.text[:-1]))
    whole = dump_state(fold_from_zero(acceptance_notes()))
    with pytest.raises(CorruptSnapshot, match="rows kept apart"):
        load_state(RowsApart(whole, split.text, split.concepts))


@given(histories(), st.data())
@settings(max_examples=60, deadline=None)
def test_later_snapshots_start_with_the_rows_of_earlier_ones_and_deltas_load_apart(
    events: list[Event], data: st.DataObject
) -> None:
    """Whatever the events (deletions, feedback, consolidation...), a row's text and
    concepts never change once folded: a later full snapshot's rows begin with an earlier
    one's, a delta's rows follow its base's, and a delta loads apart on a base loaded apart."""
    first, second = sorted(data.draw(st.lists(st.integers(0, len(events)), min_size=2, max_size=2)))
    state = fold_from_zero(events[:first])
    early = split_rows(dump_state(state))
    state.mark_base()
    fold(state, events[first:second])
    late, delta = split_rows(dump_state(state)), split_rows(encode_delta(state))
    rows = len(early.text_lengths)
    assert delta.start == rows
    assert np.array_equal(late.text_lengths[:rows], early.text_lengths)
    assert late.text.tobytes().startswith(early.text.tobytes())
    assert np.array_equal(late.concepts[: len(early.concepts)], early.concepts)
    assert late.text.tobytes() == early.text.tobytes() + delta.text.tobytes()
    loaded = load_snapshot(_apart(delta), lambda _: _apart(early))
    assert content_hash(loaded) == content_hash(state)
