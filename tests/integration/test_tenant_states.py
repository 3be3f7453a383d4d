"""A process keeps the live states of the tenants it serves within a memory budget
(ASSOCMEM_TENANT_STATE_MB), the least recently used let go first: a tenant let go reads
the same at its next read, loaded again; the default tenant's state is never let go."""

from __future__ import annotations

import dataclasses

from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import Note, ReadRequest
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings, load_settings
from assocmem.workers.state.live import BYTES_PER_MEMORY, BYTES_PER_TENANT
from tests.stores import Clock


def _texts(app: Application, who: Principal) -> list[str]:
    read = app.read(who, ReadRequest(concepts=["billing"], record_access=False))
    return sorted(item.memory.text for item in read.recall.items)


def test_the_least_recently_read_tenant_is_let_go_and_reads_the_same_after() -> None:
    clock = Clock()
    app = Application(Runtime.in_memory(Settings(), clock), clock)
    # two tenants of two memories, and a little
    app._live_budget = 2 * BYTES_PER_TENANT + 5 * BYTES_PER_MEMORY
    tenants = {name: Principal(name, "agent") for name in ("default", "t1", "t2", "t3")}
    for name, who in tenants.items():
        app.write(who, [Note(f"billing of {name} {n}", concepts=["billing"]) for n in (1, 2)])
    first = {}
    for name, who in tenants.items():  # t3 read last
        first[name] = _texts(app, who)
        app._budget_due = 0.0  # as a second passed between the reads
    held = list(app._live)
    assert held[0] == "default", "never let go"
    assert "t1" not in held and "t3" in held, "the least recently read went first"
    assert app.evicted >= 1
    assert _texts(app, tenants["t1"]) == first["t1"] == ["billing of t1 1", "billing of t1 2"]
    assert "t1" in app._live


def test_the_budget_is_a_setting_and_zero_keeps_every_tenant() -> None:
    assert load_settings({}).tenant_state_mb == 4096
    assert load_settings({"ASSOCMEM_TENANT_STATE_MB": "0"}).tenant_state_mb == 0
    clock = Clock()
    settings = dataclasses.replace(Settings(), tenant_state_mb=0)
    app = Application(Runtime.in_memory(settings, clock), clock)
    for n in range(5):
        who = Principal(f"t{n}", "agent")
        app.write(who, [Note("billing", concepts=["billing"])])
        _texts(app, who)
    assert len(app._live) == 5 and app.evicted == 0
