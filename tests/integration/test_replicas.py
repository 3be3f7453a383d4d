"""Two API replicas on one Redis: what one wrote, the other accepts at once, even before its
own state has folded it (as after a restart, when the new process starts from a snapshot)."""

from __future__ import annotations

from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import Note, Rating
from assocmem.workers.runtime.services import Runtime

WHO = Principal("default", "agent")


def test_feedback_and_importance_name_a_memory_written_through_another_replica(
    runtime: Runtime,
) -> None:
    writer, other = Application(runtime), Application(runtime)
    other.state(WHO)  # loaded before the write, and not refreshed since
    written = writer.write(WHO, [Note("timeout after deploy", concepts=["timeout", "deploy"])])
    memory = str(written[0].position)
    rated = other.give_feedback(WHO, Rating([memory], 1.0, concepts=["retry"]))
    other.set_importance(WHO, memory, 5)
    assert rated.position > written[0].position
