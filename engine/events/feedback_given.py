"""feedback.given: an answer's memories rated for a question (its concepts), -1 to 1.

Teaches a link from each question concept to each core concept of the rated memories
(the learned delta moves by the outcome, never below minus the written count), moves
each rated memory's valence toward the outcome, and teaches the link from each stream
neighbour of a rated memory that carries a question concept (the match a read brought it
beside) to the rated memory (never below 0: an unhelpful rating takes back what helpful
ones taught, not their contiguity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.payload import (
    MAX_FEEDBACK_IDS,
    check_concepts,
    check_ids,
    check_outcome,
)
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.memory import scope_of
from assocmem.engine.state.state import State, pair
from assocmem.engine.state.stream import anchors_of, taught

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event

VALENCE_RATE = 0.5
"""How far one feedback moves a memory's valence toward its outcome (0-1)."""


def build(memory_ids: list[str], outcome: float, concepts: list[str]) -> Payload:
    return {"memory_ids": list(memory_ids), "outcome": outcome, "concepts": list(concepts)}


def check(data: Payload) -> None:
    ids = data.get("memory_ids")
    check_ids(ids, "ids", MAX_FEEDBACK_IDS)
    if not ids:
        raise InvalidEvent(f"ids has 0 items: expected 1 to {MAX_FEEDBACK_IDS}")
    check_outcome(data.get("outcome"))
    check_concepts(data.get("concepts"), minimum=1)


def apply(state: State, event: Event) -> None:
    assert event.position is not None
    outcome = float(event.data["outcome"])
    memories = [state.memories[m] for m in event.data["memory_ids"] if m in state.memories]
    question = [state.intern(c) for c in event.data["concepts"]]
    held = {state.intern(c) for memory in memories for c in memory.concepts[: memory.core]}
    scope = scope_of(event)
    moved: set[tuple[int, int]] = set()
    for q in question:
        for t in sorted(held):
            if q == t or pair(q, t) in moved:
                continue
            moved.add(pair(q, t))
            value = state.learned.get(q, {}).get(t, 0.0) + outcome
            if value < 0:  # unlearns what was written, no more (the floor is never above 0)
                value = max(value, -float(state.counts.count(q, t)))
            state.set_learned(q, t, value, event.position, scope)
    for memory in memories:
        state.set_valence(memory, memory.valence + VALENCE_RATE * (outcome - memory.valence))
    asked = set(question)
    for memory in memories:
        for anchor, _ in anchors_of(state, memory.row, asked):
            link = (anchor, memory.row)
            before = state.memory_links.get(link, (0.0, event.position))[0]
            state.memory_links[link] = (taught(before, outcome), event.position)


# It reads counts (pending ones included), ids and concepts, all there for a staged note,
# and changes valence through the state's setter.
FEEDBACK_GIVEN = EventType(
    "feedback.given", 1, check, apply, build, keeps_staged=True, names_concepts=True
)
