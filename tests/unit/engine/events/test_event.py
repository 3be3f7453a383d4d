from __future__ import annotations

import dataclasses

import pytest

from assocmem.engine.errors import InvalidEvent, UnknownEventType, UnsupportedVersion
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.position import Position


def test_encode_decode_round_trip_keeps_every_field() -> None:
    original = Event("memory.written", "acme", "bot", 12.5, {"text": "x"}, user="u1", key="k1")
    decoded = decode_event(encode_event(original), Position(5, 0))
    assert decoded == Event(
        "memory.written",
        "acme",
        "bot",
        12.5,
        {"text": "x"},
        user="u1",
        key="k1",
        position=Position(5, 0),
    )


def test_an_event_as_appended_keeps_every_other_field() -> None:
    """`Event.at` names each field itself: one it left out would reach the fold as its
    default."""
    values = {f.name: f"{f.name}-value" for f in dataclasses.fields(Event)}
    made = Event(**{**values, "ts": 3.0, "data": {"text": "x"}, "v": 7, "position": None})
    assert made.at(Position(9, 1)) == dataclasses.replace(made, position=Position(9, 1))


def test_a_memory_written_before_labels_is_read_as_the_current_version() -> None:
    v1 = {"text": "we retry", "concepts": ["retri"], "importance": 3, "extractor": "tfidf-3"}
    raw = encode_event(Event("memory.written", "t", "a", 1.0, v1, v=1))
    decoded = decode_event(raw, Position(1, 0))
    assert (decoded.v, decoded.data) == (2, {**v1, "labels": {}})


@pytest.mark.parametrize(
    "raw, error",
    [
        (b"not json", InvalidEvent),
        (b"[1]", InvalidEvent),
        (b'{"type": "memory.written", "v": 1}', InvalidEvent),
        (
            b'{"type": "x.y", "v": 1, "ts": 1, "tenant": "t", "agent": "a", "data": {}}',
            UnknownEventType,
        ),
        (
            b'{"type": "memory.written", "v": 9, "ts": 1, "tenant": "t", "agent": "a", "data": {}}',
            UnsupportedVersion,
        ),
    ],
)
def test_undecodable_events_raise_a_named_error(raw: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        decode_event(raw, Position(1, 0))
