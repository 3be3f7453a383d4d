from __future__ import annotations

import pytest

from assocmem.engine import event as event_module
from assocmem.engine.errors import InvalidEvent, UnknownEventType, UnsupportedVersion
from assocmem.engine.event import Event, decode_event, encode_event


def test_encode_decode_round_trip_keeps_every_field() -> None:
    original = Event("memory.written", "acme", "bot", 12.5, {"text": "x"}, user="u1", key="k1")
    decoded = decode_event(encode_event(original), "5-0")
    assert decoded == Event(
        "memory.written", "acme", "bot", 12.5, {"text": "x"}, user="u1", key="k1", position="5-0"
    )


def test_old_version_is_upcast_on_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(event_module.CURRENT_VERSIONS, "memory.written", 2)
    monkeypatch.setitem(
        event_module.UPCASTERS, ("memory.written", 1), lambda d: {**d, "importance": 3}
    )
    raw = encode_event(Event("memory.written", "t", "a", 1.0, {"text": "x"}, v=1))
    decoded = decode_event(raw, "1-0")
    assert (decoded.v, decoded.data) == (2, {"text": "x", "importance": 3})


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
        decode_event(raw, "1-0")
