"""Erasure on both stores: the subject's events leave the log and the archive, the others
keep their positions, what is appended during the rewrite is kept, and the published
snapshot is the fold of what is left; a whole tenant leaves nothing."""

from __future__ import annotations

import pytest

from assocmem.engine.position import ZERO
from assocmem.engine.principal import Principal
from assocmem.engine.snapshot import content_hash
from assocmem.workers.application import Application
from assocmem.workers.erasure import erase, is_subject_of, subject_of
from assocmem.workers.rebuild import Rebuild, rebuild
from assocmem.workers.requests import Note, Rating
from assocmem.workers.runtime import Runtime
from assocmem.workers.stores import iter_entries

from ..stores import KINDS, Clock, make_runtime

ALICE = Principal("default", "agent", user="alice")
BOB = Principal("default", "agent", user="bob")


@pytest.fixture(params=KINDS)
def anywhere(request: pytest.FixtureRequest) -> Runtime:
    yield from make_runtime(request, request.param, Clock())


def positions(runtime: Runtime) -> list[str]:
    return [str(p) for chunk in iter_entries(runtime.log, "default", ZERO) for p, _ in chunk]


def test_a_user_s_events_go_and_the_rest_keep_their_positions(anywhere: Runtime) -> None:
    app = Application(anywhere)
    [a1] = app.write(ALICE, [Note("alice billing", ["billing", "alice"])])
    [b1] = app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.give_feedback(ALICE, Rating([str(a1.position)], 1.0, ["billing"]))
    [b2] = app.write(BOB, [Note("bob retries", ["retries", "bob"])])
    subject = subject_of("user", "alice")
    appended = []

    def keep(entry: tuple) -> bool:  # an append lands while the log is copied
        if not appended:
            appended.append(app.write(ALICE, [Note("alice during", ["late"])])[0].position)
        return not is_subject_of(subject)(entry)

    removed = anywhere.log.rewrite("default", keep)
    assert len(removed) == 2
    assert positions(anywhere) == [str(b1.position), str(b2.position), str(appended[0])]
    assert anywhere.log.epoch("default") == 1


def test_erase_publishes_the_fold_of_what_is_left_and_reports_what_went(anywhere: Runtime) -> None:
    app = Application(anywhere)
    [a1] = app.write(ALICE, [Note("alice billing", ["billing", "alice"])])
    app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.give_feedback(ALICE, Rating([str(a1.position)], 1.0, ["billing"]))
    report = erase(anywhere, "default", subject_of("user", "alice"))
    assert (report.events, report.memories, report.links) == (2, 1, 1)
    assert report.learned_weight > 0
    left = rebuild(anywhere.log, anywhere.snapshots, "default", Rebuild(from_zero=True))
    served = rebuild(anywhere.log, anywhere.snapshots, "default", Rebuild())
    assert content_hash(served) == content_hash(left) and len(left.memories) == 1
    assert str(left.position) == report.position


def test_erasing_a_tenant_leaves_nothing_of_it(anywhere: Runtime) -> None:
    app = Application(anywhere)
    app.write(BOB, [Note("bob billing", ["billing", "bob"])])
    app.write(Principal("other", "agent"), [Note("other tenant", ["kept"])])
    report = erase(anywhere, "default", subject_of("tenant", "default"))
    assert report.events == 1 and report.memories == 1
    assert positions(anywhere) == [] and anywhere.snapshots.latest_position("default") is None
    assert "default" not in anywhere.log.tenants() and anywhere.log.length("other") == 1
