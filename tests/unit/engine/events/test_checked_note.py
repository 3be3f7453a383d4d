"""The checked decoding of notes (engine/events/checked_note.py) only ever agrees with the ordinary
way: an envelope it takes, `decode_event` decodes to an event its type's check passes and
whose fold is the same; one the ordinary way refuses, it never takes. And it does take the
envelopes our writers make, or it would save nothing."""

from __future__ import annotations

import functools
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events import activity_logged, memory_written
from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.checked_note import VERSIONS, checked_note
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.events.fold import fold
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.note_payload import ColumnNote
from assocmem.engine.events.payload import check_time
from assocmem.engine.events.registry import event_type
from assocmem.engine.position import Position
from assocmem.engine.snapshot.codec import content_hash
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import extract
from tests.texts import sample_texts
from tests.unit.engine.events.test_decoder_fuzz import JSON

AT = Position(7, 0)


@functools.cache
def notes() -> list[Event]:
    """The sample's texts as the API writes them: extracted, some with a scope, one in four
    an activity."""
    events = []
    for n, text in enumerate(sample_texts()):
        extraction, importance = extract(text), 1 + n % 5
        if n % 4 == 2:
            name = ACTIVITY_LOGGED.name
            source = None if n % 8 == 2 else f"source {n}"
            data = activity_logged.build(text, extraction, importance, "deploy", ["a", "b"], source)
        else:
            name = MEMORY_WRITTEN.name
            superseded = [f"{n - 1}-0"] if n % 7 == 1 else None
            data = memory_written.build(text, extraction, importance, superseded)
        scope = {"session": f"s{n}"} if n % 3 == 0 else {}
        events.append(Event(name, "t", f"agent {n % 4}", 1.7e9 + n, data, **scope))  # type: ignore[arg-type]
    return events


def ordinary(raw: bytes) -> Event | None:
    """What the fold makes of `raw` without this decoder: the event, or None (refused)."""
    try:
        event = decode_event(raw, AT)
        check_time(event.ts)
        event_type(event.type).check(event.data)
    except InvalidEvent:
        return None
    return event


def folded(event: Event | ColumnNote) -> str:
    """The content hash of a fold of `event` alone, which must be taken."""
    state = State()
    assert fold(state, [event]) == []
    return content_hash(state)


def agrees(raw: bytes) -> bool:
    """Whether the checked decoding of `raw` agrees with the ordinary way's."""
    fast = checked_note(raw, AT, {})
    if fast is None:
        return True
    slow = ordinary(raw)
    return slow is not None and folded(fast) == folded(slow)


def test_every_note_our_writers_make_is_taken_and_folded_as_the_ordinary_way_does() -> None:
    for note in notes():
        raw = encode_event(note)
        assert checked_note(raw, AT, {}) is not None, raw
        assert agrees(raw), raw


def test_it_knows_the_versions_and_the_layout_of_notes_as_they_are_written() -> None:
    assert VERSIONS == {r.name: r.version for r in (MEMORY_WRITTEN, ACTIVITY_LOGGED)}
    kinds = {note.type: encode_event(note) for note in notes()}
    for name, version in VERSIONS.items():
        assert kinds[name].startswith(f'{{"v":{version},"type":"{name}",'.encode())


def test_a_fold_of_notes_it_took_is_the_fold_of_the_ordinary_way() -> None:
    entries = [(Position(n + 1, 0), encode_event(e)) for n, e in enumerate(notes())]
    fast = State()
    taken = []
    for position, raw in entries:  # each decoded against the state it is folded into
        taken.append(checked_note(raw, position, fast.concept_index))
        fold(fast, [e for e in taken[-1:] if e is not None])
    slow = State()
    fold(slow, [decode_event(raw, position) for position, raw in entries])
    assert None not in taken and content_hash(fast) == content_hash(slow)


def payload_changes(concept: str) -> dict[str, list[object]]:
    """Per payload field, values for it that break a rule of the type's check, or nearly."""
    return {
        "text": ["", " ", "\n\t", "x" * 100_001, "x" * 100_000, 5, None, "ok"],
        "concepts": [
            [concept, concept],
            [" " + concept],
            [concept + " "],
            ["a b"],
            ["a\u2003b"],
            [""],
            ["x" * 101],
            ["x" * 100],
            [f"c{i}" for i in range(257)],
            [f"c{i}" for i in range(256)],
            [],
            [1],
            None,
        ],
        "tiers": [[1, 0], [0, 99], [-1, 1], [0], [0, 1, 2], [True, 1], [0.0, 1], [0, 2**64], None],
        "labels": [{"nope": "x"}, {concept: ""}, {concept: "x" * 101}, {concept: 1}, None, {}],
        "importance": [0, 6, True, 3.0, "3", 2**70, None, 5],
        "extractor": [None, 3, ""],
        "supersedes": [[], [""], ["x"] * 101, [1], None, "1-0", ["1-0"]],
        "metadata": [
            {"team": "billing", "ticket": 7, "ratio": 2.5, "done": False},
            {},
            {"a": [1]},
            {"a": {"b": 1}},
            {"": 1},
            {" a": 1},
            {"a": "x" * 1001},
            {"a": None},
            {str(n): n for n in range(33)},
            {"k" * 65: 1},
            None,
        ],
        "category": ["", " ", "x" * 101, "x" * 100 + " ", 1, None, "ops"],
        "tags": [[""], [" "], ["x"] * 33, ["x"] * 32, "t", None, [1], []],
        "source": [None, "", " ", "s", 1, "x" * 101],
    }


ENVELOPE_CHANGES: dict[str, list[object]] = {
    "v": [1, 3, 2.0, "2", True],
    "type": ["activity.logged", "memory.written", "feedback.given", "nope", 2],
    "tenant": [1, None, ""],
    "agent": [1, None, [], ""],
    "user": [1, [], "u", ""],
    "ts": [-1.0, 1e300, 253_402_300_800, 253_402_300_799, "1700000000", True, None, 0, 1.5],
    "key": [1, "k", [], None],
    "session": [1, "s", None],
    "namespace": [1, "n", None],
}


def dumped(envelope: dict[str, object]) -> bytes:
    """As orjson lays it out, integers past 64 bits too."""
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def a_linking_note(kind: str) -> dict[str, object]:
    note = next(n for n in notes() if n.type == kind and len(n.data["concepts"]) >= 2)
    return orjson.loads(encode_event(note))  # type: ignore[no-any-return]


def changed(
    envelope: dict[str, object], field: str, at: int, in_payload: bool, concept: str
) -> None:
    """`envelope` with `field` given the `at`-th of its changes (`concept`: one of the note's
    as it was written)."""
    if in_payload:
        data = envelope["data"]
        assert isinstance(data, dict)
        data[field] = payload_changes(concept)[field][at]
    else:
        envelope[field] = ENVELOPE_CHANGES[field][at]


EVERY_CHANGE = [
    pytest.param(kind, field, at, True, id=f"{kind}:data.{field}-{at}")
    for kind in VERSIONS
    for field, values in payload_changes("x").items()
    for at in range(len(values))
] + [
    pytest.param(kind, field, at, False, id=f"{kind}:{field}-{at}")
    for kind in VERSIONS
    for field, values in ENVELOPE_CHANGES.items()
    for at in range(len(values))
]


@pytest.mark.parametrize(("kind", "field", "at", "in_payload"), EVERY_CHANGE)
def test_a_note_with_a_field_changed_is_taken_only_as_the_ordinary_way_takes_it(
    kind: str, field: str, at: int, in_payload: bool
) -> None:
    envelope = a_linking_note(kind)
    changed(envelope, field, at, in_payload, envelope["data"]["concepts"][0])  # type: ignore[index]
    assert agrees(dumped(envelope))


@st.composite
def damaged_notes(draw: st.DrawFn) -> bytes:
    """A note with up to two fields changed, one taken out or one added, and laid out as
    orjson does or not: a field again (the last one counts), an escape, a trailing byte."""
    linking = [n for n in notes()[:80] if len(n.data["concepts"]) >= 2]
    envelope = orjson.loads(encode_event(draw(st.sampled_from(linking))))
    concept = envelope["data"]["concepts"][0]
    for _ in range(draw(st.integers(0, 2))):
        in_payload = draw(st.booleans())
        changes = payload_changes("x") if in_payload else ENVELOPE_CHANGES
        field = draw(st.sampled_from(sorted(changes)))
        at = draw(st.integers(0, len(changes[field]) - 1))
        changed(envelope, field, at, in_payload, concept)
    where = envelope if draw(st.booleans()) else envelope["data"]
    if draw(st.booleans()):
        del where[draw(st.sampled_from(sorted(where)))]
    elif draw(st.booleans()):
        where[draw(st.text(max_size=8))] = draw(JSON)
    raw = dumped(envelope)
    return draw(
        st.sampled_from(
            [
                raw,
                raw[:-1] + b',"type":"feedback.given"}',
                raw[:-1] + b',"v":1}',
                raw.replace(b'"text":"', b'"text":"\\ud800', 1),
                raw.replace(b'"text":"', b'"text":"\\u00e9', 1),
                raw.replace(b'"importance":', b'"importance":1,"importance":', 1),
                raw + b" ",
                raw + b"x",
            ]
        )
    )


@given(damaged_notes())
@settings(max_examples=400, deadline=None)
def test_an_envelope_it_takes_is_one_the_ordinary_way_takes_as_the_same_event(raw: bytes) -> None:
    assert agrees(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"v":2,"type":"memory.written"',
        b'{"v":2,"type":"memory.written",}',
        b'{"v":2,"type":"memory.written","tenant":"t"}',
        b"[]",
        b"",
    ],
)
def test_what_is_not_a_whole_note_is_left_to_the_ordinary_way(raw: bytes) -> None:
    assert checked_note(raw, AT, {}) is None
