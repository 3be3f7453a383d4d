"""memory.written: a note, with the concepts extracted when it was appended.

v2 adds `labels` (concept -> the word the text wrote for it, where the two differ;
optional); v1 payloads are read with none, so their concepts are shown as themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assocmem.engine.events.payload import (
    MAX_SUPERSEDES,
    check_concepts,
    check_ids,
    check_importance,
    check_labels,
    check_text,
    check_tiers,
)
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.cooccurrence import LINK_WINDOW, LINKED_CONCEPTS
from assocmem.engine.state.memory import Memory
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import EXTRACTOR_VERSION, Extraction

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(
    text: str, extraction: Extraction, importance: int, supersedes: list[str] | None = None
) -> Payload:
    data: Payload = {
        "text": text,
        "concepts": list(extraction.concepts),
        "tiers": extraction.tiers,
        "labels": dict(extraction.labels),
        "importance": importance,
        "extractor": EXTRACTOR_VERSION,
    }
    if supersedes:
        data["supersedes"] = list(supersedes)
    return data


def check_note(data: Payload) -> None:
    """What a memory.written and an activity.logged payload share."""
    check_text(data.get("text"))
    concepts = check_concepts(data.get("concepts"))
    check_tiers(data.get("tiers"), data["concepts"])
    check_labels(data.get("labels", {}), concepts)
    check_importance(data.get("importance"))


def check(data: Payload) -> None:
    check_note(data)
    check_ids(data.get("supersedes", []), "supersedes", MAX_SUPERSEDES)


def apply(state: State, event: Event) -> None:
    memory = add_memory(state, event, "memory", None)
    for old in event.data.get("supersedes", []):
        if old in state.memories and old != memory.id:
            state.supersede(state.memories[old], memory.id)


def add_memory(state: State, event: Event, kind: str, meta: dict[str, Any] | None) -> Memory:
    """Register the note's memory, its words, and the links among its key concepts."""
    data = event.data
    concepts = tuple(data["concepts"])
    core, matched = data.get("tiers") or (len(concepts), len(concepts))
    memory = Memory(
        id=str(event.position),
        text=data["text"],
        concepts=concepts,
        agent=event.agent,
        user=event.user,
        ts=event.ts,
        importance=data["importance"],
        core=core,
        matched=matched,
        kind=kind,
        meta=meta,
        session=event.session,
        namespace=event.namespace,
    )
    indices = state.stage_memory(memory, data.get("labels", {}))
    # Supplement terms only verify a match; they make no links.
    state.counts.add_window(
        indices[: min(matched, LINKED_CONCEPTS)], LINK_WINDOW, len(state.concepts)
    )
    return memory


def without_labels(data: Payload) -> Payload:
    """v1 -> v2: no words were stored, so each concept stands for itself."""
    return {**data, "labels": {}}


MEMORY_WRITTEN = EventType(
    "memory.written",
    2,
    check,
    apply,
    build,
    upcasters={1: without_labels},
    keeps_staged=True,
    is_row=True,
    counts_concepts=True,
    names_concepts=True,
)
