"""`History.link` reads the log once (or, from a state's index, the entries it names and the
log after it), decodes ratings once, and lists exactly what a fold of every event would: the
same changes in log order, whatever malformed entries lie between."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold_from_zero
from assocmem.engine.history.audit import link_history
from assocmem.engine.history.link_index import link_index
from assocmem.engine.position import ZERO
from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.history import History
from assocmem.workers.app.requests import Note, ReadRequest
from assocmem.workers.errors import UnknownConcept
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.rebuild import events_of
from tests.stores import KINDS, Clock, make_runtime, note

PRINCIPAL = Principal("default", "auditor")


def rating(memory_id: str, outcome: float, concepts: list[str]) -> Event:
    data = {"memory_ids": [memory_id], "outcome": outcome, "concepts": concepts}
    return Event("feedback.given", "default", "agent", 1.0, data)


def test_a_link_audit_lists_ratings_and_writes_in_log_order_past_malformed_entries() -> None:
    runtime = Runtime.in_memory(Settings(), Clock())
    log_ = runtime.log
    [first] = log_.append("default", [note(["timeout", "jitter"])])
    log_.append_raw("default", b"{broken")
    [other] = log_.append("default", [note(["jitter", "retry"])])
    log_.append("default", [rating(str(other.position), 1.0, ["timeout"])])  # taught via one
    log_.append_raw("default", b'{"v":1,"type":"feedback.given","data":7}')
    log_.append("default", [note(["timeout", "jitter", "backoff"])])
    log_.append("default", [rating(str(first.position), -0.5, ["jitter"])])
    audited = History(runtime).link(Principal("default", "auditor"), "timeout", "jitter")
    everything = link_history(events_of(log_, "default"), "timeout", "jitter")
    assert audited.changes == everything.changes
    assert [(c.type, c.written) for c in audited.changes] == [
        ("memory.written", 1),
        ("feedback.given", 0),
        ("memory.written", 1),
        ("feedback.given", 0),
    ]
    assert [c.position for c in audited.changes] == sorted(c.position for c in audited.changes)
    assert audited.changes[0].position > ZERO


@pytest.fixture(params=KINDS)
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    yield from make_runtime(request, request.param, Clock())


def test_a_link_audit_from_a_state_s_index_fetches_what_it_names_and_reads_only_the_log_after(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_ = runtime.log
    [first] = log_.append("default", [note(["timeout", "jitter"])])
    [one] = log_.append("default", [note(["jitter", "retry"])])  # names one: rated below
    log_.append("default", [note(["retry", "backoff"]), note(["timeout", "other"])])
    log_.append("default", [note(["other", str(n)]) for n in range(6)])  # the index: 2 of 12
    log_.append_raw("default", b"{broken")
    log_.append("default", [rating(str(one.position), 1.0, ["timeout"])])
    assert log_.archive("default", first.position, 100) is not None  # the head is archived
    state = fold_from_zero(events_of(log_, "default"))  # the state at hand ends here
    log_.append("default", [note(["timeout", "jitter", "backoff"])])
    log_.append("default", [rating(str(first.position), -0.5, ["jitter"])])
    log_.append("default", [note(["jitter", "x"])])  # a word of jitter, after the state
    everything = link_history(events_of(log_, "default"), "timeout", "jitter")
    read_whole = History(runtime, lambda *_: None)
    assert read_whole.link(PRINCIPAL, "timeout", "jitter") == everything

    def never(*_: object) -> None:
        raise AssertionError("the whole log was read")

    monkeypatch.setattr(History, "_read_link", never)
    indexed = History(runtime, lambda tenant, a, b: link_index(state, a, b))
    assert indexed.link(PRINCIPAL, "timeout", "jitter") == everything
    assert [c.type for c in everything.changes] == ["memory.written", "feedback.given"] * 2


def test_a_worker_s_link_audit_folds_the_tenant_first_then_reads_from_that_state_s_index(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_ = runtime.log
    first, _ = log_.append("default", [note(["timeout", "jitter"]), note(["jitter", "x"])])
    log_.append("default", [rating(str(first.position), 1.0, ["timeout"])])
    log_.append("default", [note(["other", str(n)]) for n in range(6)])  # the index: 2 of 9
    everything = link_history(events_of(log_, "default"), "timeout", "jitter")

    def never(*_: object) -> None:
        raise AssertionError("the whole log was read")

    monkeypatch.setattr(History, "_read_link", never)
    assert History(runtime).link(PRINCIPAL, "timeout", "jitter") == everything
    assert runtime.folded["default"].state.position == log_.last_position("default")


def test_a_link_audit_reads_the_whole_log_when_the_index_names_most_of_it(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_ = runtime.log
    first, _ = log_.append("default", [note(["timeout", "jitter"]), note(["timeout", "x"])])
    for outcome in (1.0, -0.5, 0.25):  # ratings: every one of them is in the index
        log_.append("default", [rating(str(first.position), outcome, ["timeout"])])
    state = fold_from_zero(events_of(log_, "default"))
    everything = link_history(events_of(log_, "default"), "timeout", "jitter")

    def never(*_: object) -> None:
        raise AssertionError("fetched by position what a whole read costs less for")

    monkeypatch.setattr(History, "_indexed_link", never)
    indexed = History(runtime, lambda tenant, a, b: link_index(state, a, b))
    assert indexed.link(PRINCIPAL, "timeout", "jitter") == everything


def test_a_link_audit_of_a_concept_no_event_named_says_so_with_the_nearest_known(
    runtime: Runtime,
) -> None:
    log_ = runtime.log
    log_.append("default", [note(["timeout", "jitter"]), note(["kernel", "backoff"])])
    state = fold_from_zero(events_of(log_, "default"))
    history = History(runtime, lambda tenant, a, b: link_index(state, a, b))
    assert history.link(PRINCIPAL, "timeout", "kernel").changes == ()  # known, never linked
    with pytest.raises(UnknownConcept, match="concept 'timout' is unknown: .* 'timeout'"):
        history.link(PRINCIPAL, "timout", "jitter")
    with pytest.raises(UnknownConcept, match="concepts 'qqq' and 'zzz' are unknown"):
        history.link(PRINCIPAL, "qqq", "zzz")
    log_.append("default", [note(["timout", "jitter"])])  # named after the state at hand
    assert [c.written for c in history.link(PRINCIPAL, "timout", "jitter").changes] == [1]


def test_a_link_s_ppmi_is_sampled_at_kept_snapshots_and_ends_where_a_read_says() -> None:
    """PPMI moves with every write of either concept or any other: the audit reads it at
    the snapshots kept along the log, and last in the served state, where it is the
    figure a read's `via` shows for the same link."""
    clock = Clock()
    runtime = Runtime.in_memory(Settings(snapshot_every=1), clock)
    app = Application(runtime, clock)
    who = Principal("default", "agent")
    app.write(who, [Note("a b", concepts=["a", "b"])])
    fold_and_publish(runtime, "default", force=True)
    clock.advance(1)
    app.write(who, [Note("a b again", concepts=["a", "b"]), Note("b c", concepts=["b", "c"])])
    fold_and_publish(runtime, "default", force=True)
    clock.advance(1)
    app.write(who, [Note(f"c note {n}", concepts=["c", f"d{n}"]) for n in range(6)])
    samples = app.link_ppmi(who, "a", "b")
    assert len(samples) == 3, "two snapshots kept, then the served state"
    assert [s.position for s in samples] == sorted(s.position for s in samples)
    assert samples[0].ppmi < samples[1].ppmi < samples[-1].ppmi, "other concepts' notes raise it"
    read = app.read(who, ReadRequest(concepts=["a"], depth="standard"))
    via = [v for item in read.recall.items for v in item.via if v.concept == "b"]
    assert via and via[0].ppmi == pytest.approx(samples[-1].ppmi, abs=1e-6)
    assert app.link_ppmi(who, "a", "nothing")[-1].ppmi == 0.0


def test_a_link_s_ppmi_before_any_snapshot_is_the_served_state_s_alone() -> None:
    """Before the workers publish their first snapshot there is nothing kept to sample:
    the served state answers (it was a 500, found by schemathesis on a cluster)."""
    clock = Clock()
    runtime = Runtime.in_memory(Settings(snapshot_every=1), clock)
    app = Application(runtime, clock)
    who = Principal("default", "agent")
    app.write(who, [Note("a b", concepts=["a", "b"]), Note("a b again", concepts=["a", "b"])])
    assert runtime.snapshots.starts("default") == []
    [served] = app.link_ppmi(who, "a", "b")
    assert served.position == runtime.log.last_position("default")


def test_a_diff_up_to_now_compares_with_the_served_state_as_a_rebuild_would() -> None:
    """The web page's usual question, from some moment to now, takes the served state for
    now instead of rebuilding it: the answer is the one a rebuild gives."""
    clock = Clock()
    runtime = Runtime.in_memory(Settings(snapshot_every=1), clock)
    app = Application(runtime, clock)
    who = Principal("default", "agent")
    [first] = app.write(who, [Note("a b", concepts=["a", "b"])])
    fold_and_publish(runtime, "default", force=True)
    app.write(who, [Note("a c", concepts=["a", "c"]), Note("a b again", concepts=["a", "b"])])
    last = runtime.log.last_position("default")
    assert last is not None
    served = app.diff(who, str(first.position), "99999999999999-0")
    rebuilt = History(runtime).diff(who, first.position, last, None)
    assert (served.first, served.second) == (rebuilt.first, rebuilt.second)
    assert served.links == rebuilt.links
    assert [(c.source, c.target) for c in served.links.appeared] == [("a", "c")]
    assert [(c.source, c.target) for c in served.links.changed] == [("a", "b")]


def test_a_link_s_ppmi_at_kept_snapshots_is_read_once_then_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sample at a kept snapshot loads a whole state (about a second for six at
    50,000 memories): the web page asks for them at each view of a link."""
    import assocmem.workers.app.application as application_module

    clock = Clock()
    runtime = Runtime.in_memory(Settings(snapshot_every=1), clock)
    app = Application(runtime, clock)
    who = Principal("default", "agent")
    for n in range(3):
        app.write(who, [Note(f"a b {n}", concepts=["a", "b"]), Note(f"c {n}", concepts=["c"])])
        fold_and_publish(runtime, "default", force=True)
    loads = []
    real = application_module.rebuild
    monkeypatch.setattr(
        application_module, "rebuild", lambda *args: loads.append(args) or real(*args)
    )
    first = app.link_ppmi(who, "a", "b")
    assert loads, "the kept snapshots were loaded"
    loaded = len(loads)
    assert app.link_ppmi(who, "a", "b") == first
    assert len(loads) == loaded, "not loaded again"
