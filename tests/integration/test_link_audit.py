"""`History.link` reads the log once, decodes ratings once, and lists exactly what a fold of
every event would: the same changes in log order, whatever malformed entries lie between."""

from __future__ import annotations

from assocmem.engine.audit import link_history
from assocmem.engine.event import Event
from assocmem.engine.position import ZERO
from assocmem.engine.principal import Principal
from assocmem.workers.history import History
from assocmem.workers.rebuild import events_of
from assocmem.workers.runtime import Runtime
from assocmem.workers.settings import Settings

from ..stores import Clock, note


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
