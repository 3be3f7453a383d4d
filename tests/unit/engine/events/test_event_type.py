"""A new event type is one record: registered, it is checked, upcast and folded like the
built-in ones, and rejected into dead letters when its payload breaks its rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem.engine.errors import InvalidEvent, UnknownEventType
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.events.fold import fold
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.events.registry import event_type, register, unregister
from assocmem.engine.position import Position
from assocmem.engine.state.state import State
from tests.unit.engine.make_events import written


def check(data: Payload) -> None:
    if not isinstance(data.get("stars"), int) or not 0 <= data["stars"] <= 5:
        raise InvalidEvent(f"stars {data.get('stars')!r} is out of range: expected 0 to 5")


def apply(state: State, event: Event) -> None:
    state.documents += event.data["stars"]  # a toy: count stars where the fold can show them


def build(stars: int) -> Payload:
    return {"stars": stars}


def v1_to_v2(data: Payload) -> Payload:
    return {"stars": data["rating"]}


TOY = EventType("toy.rated", 2, check, apply, build, upcasters={1: v1_to_v2})


@pytest.fixture
def toy() -> Iterator[EventType]:
    register(TOY)
    yield TOY
    unregister(TOY.name)


def toy_event(n: int, data: Payload, v: int = 0) -> Event:
    return Event(TOY.name, "t", "agent", float(n), data, v=v, position=Position(n, 0))


def test_a_registered_type_is_built_checked_and_folded(toy: EventType) -> None:
    assert toy.payload(stars=4) == {"stars": 4}
    with pytest.raises(InvalidEvent, match="stars 9 is out of range"):
        toy.payload(stars=9)
    state = State()
    rejections = fold(
        state, [written(1, ["a"]), toy_event(2, {"stars": 4}), toy_event(3, {"stars": 9})]
    )
    assert state.documents == 4
    assert [str(r.position) for r in rejections] == ["3-0"]
    assert state.position == Position(3, 0)


def test_an_old_payload_of_the_type_is_upcast_on_read(toy: EventType) -> None:
    raw = encode_event(toy_event(1, {"rating": 3}, v=1))
    decoded = decode_event(raw, Position(1, 0))
    assert (decoded.v, decoded.data) == (2, {"stars": 3})


def test_an_unregistered_type_is_unknown_and_its_event_a_rejection() -> None:
    with pytest.raises(UnknownEventType):
        event_type(TOY.name)
    state = State()
    event = Event(TOY.name, "t", "agent", 1.0, {"stars": 1}, v=2, position=Position(1, 0))
    assert [r.reason for r in fold(state, [event])][0].startswith(
        "event type 'toy.rated' is unknown"
    )
