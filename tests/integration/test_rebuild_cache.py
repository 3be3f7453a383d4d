"""A `without_feedback` or `as_of` read folds the log once, then only what came after."""

from __future__ import annotations

import pytest

import assocmem.workers.rebuild_cache as cache_module
from assocmem.engine.principal import Principal
from assocmem.workers.application import Application
from assocmem.workers.requests import Note, Rating, ReadRequest
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings

from ..stores import Clock


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
