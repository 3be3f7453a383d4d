from __future__ import annotations

from assocmem.engine.event import Event
from assocmem.workers.keys import fold_wanted_key
from assocmem.workers.runtime import Runtime


def note(text: str, key: str | None = None) -> Event:
    data = {"text": text, "concepts": ["x"], "importance": 3, "extractor": "test"}
    return Event("memory.written", "default", "agent", 1.0, data, key=key)


def test_append_returns_increasing_positions_and_flags_a_fold(runtime: Runtime) -> None:
    appended = runtime.log.append("default", [note("one"), note("two")])
    positions = [a.position for a in appended]
    assert [p for p, _ in runtime.log.entries("default", "0-0")] == positions
    assert runtime.data.exists(fold_wanted_key("default"))
    assert runtime.log.tenants() == ["default"]


def test_same_idempotency_key_is_stored_once(runtime: Runtime) -> None:
    first = runtime.log.append("default", [note("once", key="k1")])[0]
    again = runtime.log.append("default", [note("once", key="k1"), note("twice", key="k1")])
    assert [a.position for a in again] == [first.position, first.position]
    assert all(a.is_duplicate for a in again)
    assert runtime.log.length("default") == 1


def test_entries_read_after_a_position_exclusively(runtime: Runtime) -> None:
    positions = [
        a.position for a in runtime.log.append("default", [note(str(i)) for i in range(5)])
    ]
    assert [
        p for p, _ in runtime.log.entries("default", positions[1], upto=positions[3])
    ] == positions[2:4]
    batches = list(runtime.log.iter_entries("default", "0-0", batch=2))
    assert [len(b) for b in batches] == [2, 2, 1]
