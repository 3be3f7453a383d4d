"""Event builders for engine tests: positions are '<n>-0' in log order."""

from __future__ import annotations

from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.consolidation import Rule, decide
from assocmem.engine.events.document_ingested import DOCUMENT_INGESTED
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.importance_set import IMPORTANCE_SET
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.events.memory_accessed import MEMORY_ACCESSED
from assocmem.engine.events.memory_deleted import MEMORY_DELETED
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.position import Position
from assocmem.engine.state.state import State


def written(
    n: int, concepts: list[str], text: str | None = None, importance: int = 3, tenant: str = "t"
) -> Event:
    data = {
        "text": text or " ".join(concepts) + f" note {n}",
        "concepts": concepts,
        "importance": importance,
        "extractor": "test",
    }
    return Event(MEMORY_WRITTEN.name, tenant, "agent", float(n), data, position=Position(n, 0))


def feedback(
    n: int, ids: list[str], outcome: float, concepts: list[str], tenant: str = "t"
) -> Event:
    data = {"memory_ids": ids, "outcome": outcome, "concepts": concepts}
    return Event(FEEDBACK_GIVEN.name, tenant, "agent", float(n), data, position=Position(n, 0))


def acceptance_notes() -> list[Event]:
    """A with B twice, B with C, C with D, A with E once, E with G."""
    pairs = [["a", "b"], ["a", "b"], ["b", "c"], ["c", "d"], ["a", "e"], ["e", "g"]]
    return [written(i + 1, p) for i, p in enumerate(pairs)]


def activity(n: int, concepts: list[str], category: str = "work", tenant: str = "t") -> Event:

    data = {
        "text": " ".join(concepts) + f" activity {n}",
        "concepts": concepts,
        "importance": 3,
        "category": category,
        "tags": [],
        "source": None,
    }
    return Event(ACTIVITY_LOGGED.name, tenant, "agent", float(n), data, position=Position(n, 0))


def document(n: int, units: list[list[str]], tenant: str = "t") -> Event:

    data = {"title": f"doc {n}", "source": None, "scope": "sentence", "units": units}
    return Event(DOCUMENT_INGESTED.name, tenant, "agent", float(n), data, position=Position(n, 0))


def accessed(n: int, ids: list[str], tenant: str = "t") -> Event:

    data = {"memory_ids": ids, "hits": [1] * len(ids)}
    return Event(MEMORY_ACCESSED.name, tenant, "agent", float(n), data, position=Position(n, 0))


def deleted(n: int, memory_id: str, tenant: str = "t") -> Event:
    data = {"memory_id": memory_id}
    return Event(MEMORY_DELETED.name, tenant, "agent", float(n), data, position=Position(n, 0))


def importance_set(n: int, memory_id: str, importance: int, tenant: str = "t") -> Event:

    data = {"memory_id": memory_id, "importance": importance}
    return Event(IMPORTANCE_SET.name, tenant, "agent", float(n), data, position=Position(n, 0))


def consolidated(n: int, state_before: State, rule: Rule, tenant: str = "t") -> Event:
    """A links.consolidated event decided on `state_before`, appended at position n."""
    decision, effect = decide(state_before, rule)
    data = LINKS_CONSOLIDATED.payload(
        decision=decision, effect=effect, decided_at=str(state_before.position)
    )
    return Event(LINKS_CONSOLIDATED.name, tenant, "sleep", float(n), data, position=Position(n, 0))
