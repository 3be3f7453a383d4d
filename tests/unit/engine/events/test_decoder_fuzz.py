"""Whatever lands in the log, the decoder and the fold refuse it as an InvalidEvent (a dead
letter) or apply it: no other exception, which would stop a tenant's fold for good.

Entries are drawn as arbitrary bytes, as arbitrary JSON, and as valid histories with one
event's payload field replaced by arbitrary JSON or taken out: the near misses a buggy or
hostile publisher writes."""

from __future__ import annotations

import dataclasses

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.events.fold import fold
from assocmem.engine.position import Position
from assocmem.engine.state.state import State
from tests.unit.engine.state.test_fold_properties import histories

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
AT = Position(1, 0)


def decoded_or_refused(raw: bytes, position: Position) -> object:
    try:
        return decode_event(raw, position)
    except InvalidEvent:
        return None


@given(st.binary(max_size=200) | JSON.map(orjson.dumps))
@settings(max_examples=300, deadline=None)
def test_any_bytes_decode_or_are_refused_as_invalid(raw: bytes) -> None:
    event = decoded_or_refused(raw, AT)
    if event is not None:
        fold(State(), [event])  # type: ignore[list-item]


def encoded(event: Event) -> bytes:
    """As the log holds it (the histories carry positions where the log has their text)."""
    data = orjson.loads(orjson.dumps(event.data, default=str))
    return encode_event(dataclasses.replace(event, data=data))


@st.composite
def damaged(draw: st.DrawFn) -> list[bytes]:
    events = draw(histories())
    raws = [encoded(e) for e in events]
    index = draw(st.integers(0, len(raws) - 1))
    envelope = orjson.loads(raws[index])
    target = envelope["data"] if draw(st.booleans()) and envelope["data"] else envelope
    field = draw(st.sampled_from(sorted(target)))
    if draw(st.booleans()):
        del target[field]
    else:
        target[field] = draw(JSON)
    raws[index] = orjson.dumps(envelope)
    return raws


@given(damaged())
@settings(max_examples=300, deadline=None)
def test_a_history_with_one_damaged_event_folds_to_its_end(raws: list[bytes]) -> None:
    """Refusals may cascade (a rating of a memory the damage refused is refused too), but
    the fold reaches the end of the history."""
    events = [decoded_or_refused(raw, Position(n + 1, 0)) for n, raw in enumerate(raws)]
    state = State()
    fold(state, [e for e in events if e is not None])  # type: ignore[misc]
    last = max(n for n, e in enumerate(events) if e is not None) if any(events) else -1
    assert last < 0 or state.position == Position(last + 1, 0)
