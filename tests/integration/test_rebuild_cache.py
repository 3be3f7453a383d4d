"""A `without_feedback` or `as_of` read folds the log once, then only what came after."""

from __future__ import annotations

import weakref

import pytest

import assocmem.workers.state.rebuild_cache as cache_module
from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import Note, Rating, ReadRequest
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.stores import Clock


def test_a_read_without_feedback_is_rebuilt_once_and_kept_up_to_date(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    app = Application(Runtime.in_memory(Settings(), clock), clock)
    who = Principal("default", "agent")
    first = app.write(who, [Note("a b", concepts=["a", "b"])])[0]
    clock.advance(1)
    app.give_feedback(who, Rating([str(first.position)], 1.0, concepts=["x"]))
    rebuilds = []
    real = cache_module.rebuild
    monkeypatch.setattr(cache_module, "rebuild", lambda *a: rebuilds.append(a) or real(*a))
    plain = ReadRequest(concepts=["a"], without_feedback=True, record_access=False)
    assert app.read(who, plain).recall.items[0].memory.valence == 0.0  # the rating left out
    clock.advance(1)
    second = app.write(who, [Note("a c", concepts=["a", "c"])])[0]
    found = {i.memory.id for i in app.read(who, plain).recall.items}
    assert found == {str(first.position), str(second.position)}
    assert len(rebuilds) == 1  # the second read folded only the new write
    at = ReadRequest(concepts=["a"], as_of=str(first.position), record_access=False)
    for _ in range(2):
        assert [i.memory.id for i in app.read(who, at).recall.items] == [str(first.position)]
    assert len(rebuilds) == 2


def test_an_as_of_read_later_than_a_kept_one_folds_on_from_it_unless_a_snapshot_is_nearer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    runtime = Runtime.in_memory(Settings(), clock)
    app = Application(runtime, clock)
    who = Principal("default", "agent")
    ids = []
    for n in range(4):
        ids.append(str(app.write(who, [Note(f"a n{n}", concepts=["a", f"n{n}"])])[0].position))
        clock.advance(1)
        if n == 2:
            assert fold_and_publish(runtime, "default", force=True)["published"]  # at ids[2]
    rebuilds = []
    real = cache_module.rebuild
    monkeypatch.setattr(cache_module, "rebuild", lambda *a: rebuilds.append(a) or real(*a))

    def found_at(point: str) -> set[str]:
        at = ReadRequest(concepts=["a"], as_of=point, record_access=False)
        return {i.memory.id for i in app.read(who, at).recall.items}

    assert found_at(ids[0]) == set(ids[:1])
    assert found_at(ids[1]) == set(ids[:2])
    assert len(rebuilds) == 1  # folded on from the state at ids[0]: no snapshot before ids[1]
    assert found_at(ids[3]) == set(ids)
    assert len(rebuilds) == 2  # from the snapshot at ids[2], nearer than the state at ids[1]
    assert found_at(ids[0]) == set(ids[:1])
    assert len(rebuilds) == 3  # no state kept before ids[0]: the one there moved on


def test_a_rebuilt_state_the_cache_lets_go_is_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild is frozen out of the collector's sight (workers/state/heap.py), so a reference
    cycle through a state would keep it for the life of the process: every `as_of` read
    at a new point leaked a whole state (1-2 GB at a million events) before a state's
    back-references were made weak."""
    clock = Clock()
    app = Application(Runtime.in_memory(Settings(), clock), clock)
    who = Principal("default", "agent")
    alice = Principal("default", "agent", user="alice")
    points = []
    for n in range(cache_module.KEPT + 3):
        note = Note(f"a b{n}", concepts=["a", f"b{n}"])
        points.append(str(app.write(alice if n % 2 else who, [note])[0].position))
        clock.advance(1)
    app.give_feedback(who, Rating([points[0]], 1.0, concepts=["a", "b0"]))
    rebuilt: list[weakref.ref] = []
    alive_before: list[int] = []
    real = cache_module.rebuild

    def rebuild(*args: object) -> object:
        alive_before.append(sum(ref() is not None for ref in rebuilt))
        state = real(*args)
        rebuilt.append(weakref.ref(state))
        return state

    monkeypatch.setattr(cache_module, "rebuild", rebuild)
    for point in reversed(points):  # latest first: each one rebuilt, none folded on
        for principal in (who, alice):  # a scoped read keeps views of the state in it
            request = ReadRequest(concepts=["a"], as_of=point, record_access=False)
            assert app.read(principal, request).recall.items
        app.graph(alice, ["a"], 2, as_of=point)
    assert len(rebuilt) == len(points)
    alive = [ref() is not None for ref in rebuilt]
    assert alive == [False] * (len(points) - cache_module.KEPT) + [True] * cache_module.KEPT
    # the least recently read one went before each rebuild, which reuses its memory
    assert max(alive_before) == cache_module.KEPT - 1
