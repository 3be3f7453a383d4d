"""Which memories a read sees, from its scopes and theirs (engine/state/visibility.py)."""

from __future__ import annotations

import dataclasses

import pytest

from assocmem.engine.events.fold import fold, fold_from_zero
from assocmem.engine.recall.recall import Query, recall
from assocmem.engine.snapshot.codec import content_hash, dump_state, load_state
from assocmem.engine.state.visibility import Visibility, visibility_of
from tests.unit.engine.make_events import written

NOTES = {  # id -> (user, session, namespace)
    "1-0": (None, None, None),
    "2-0": ("alice", None, None),
    "3-0": ("bob", None, None),
    "4-0": ("alice", "s1", None),
    "5-0": (None, "s2", None),
    "6-0": (None, None, "ops"),
    "7-0": ("alice", None, "ops"),
}


def state():  # type: ignore[no-untyped-def]
    events = [
        dataclasses.replace(written(n, ["billing", f"c{n}"]), user=u, session=s, namespace=ns)
        for n, (u, s, ns) in ((int(i.split("-")[0]), scope) for i, scope in NOTES.items())
    ]
    return fold_from_zero(events)


@pytest.mark.parametrize(
    ("visibility", "seen"),
    [
        (Visibility(), {"1-0", "5-0"}),  # about nobody: every session, no namespace
        (Visibility(user="alice"), {"1-0", "2-0", "4-0", "5-0"}),
        (Visibility(user="bob"), {"1-0", "3-0", "5-0"}),
        (Visibility(user="alice", session="s1"), {"1-0", "2-0", "4-0"}),
        (Visibility(namespace="ops"), {"6-0"}),
        (Visibility(user="alice", namespace="ops"), {"6-0", "7-0"}),
        (Visibility(everything=True), set(NOTES)),
    ],
)
def test_a_read_sees_its_scopes_and_the_shared_memories(visibility: Visibility, seen: set) -> None:
    found = recall(state(), Query(("billing",), limit=20, visibility=visibility))
    assert {item.memory.id for item in found.items} == seen


def test_an_admin_naming_a_scope_gets_that_scope_not_everything() -> None:
    assert visibility_of(None, None, None, admin=True).everything
    assert visibility_of("alice", None, None, admin=True) == Visibility(user="alice")
    assert not visibility_of(None, None, None, admin=False).everything


def test_scopes_survive_a_snapshot_and_count_in_its_hash() -> None:
    folded = state()
    loaded = load_state(dump_state(folded))
    assert [(m.user, m.session, m.namespace) for m in loaded.rows] == list(NOTES.values())
    assert content_hash(loaded) == content_hash(folded)
    assert sorted(loaded.scoped_rows) == sorted(folded.scoped_rows) == [1, 2, 3, 4, 5, 6]


def test_memories_written_after_a_read_are_seen_by_their_scopes_only() -> None:
    folded = fold_from_zero([])
    seen_by = {}
    for n, (user, session, namespace) in enumerate(NOTES.values(), start=1):
        note = written(n, ["billing", f"c{n}"])
        fold(folded, [dataclasses.replace(note, user=user, session=session, namespace=namespace)])
        for visibility in (Visibility(user="alice"), Visibility(namespace="ops")):
            found = recall(folded, Query(("billing",), limit=20, visibility=visibility))
            seen_by[visibility] = {item.memory.id for item in found.items}
    assert seen_by == {
        Visibility(user="alice"): {"1-0", "2-0", "4-0", "5-0"},
        Visibility(namespace="ops"): {"6-0"},
    }
