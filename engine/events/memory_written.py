"""memory.written: a note, with the concepts extracted when it was appended.

v2 adds `labels` (concept -> the word the text wrote for it, where the two differ;
optional); v1 payloads are read with none, so their concepts are shown as themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..cooccurrence import LINK_WINDOW, LINKED_CONCEPTS
from ..event_type import EventType, Payload, register
from ..extraction import EXTRACTOR_VERSION, Extraction
from ..payload import (
    MAX_SUPERSEDES,
    check_concepts,
    check_ids,
    check_importance,
    check_labels,
    check_text,
    check_tiers,
)
from ..state import Memory, State

if TYPE_CHECKING:
    from ..event import Event


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
    apply_run(state, [event])


def apply_run(state: State, events: list[Event]) -> None:
    """`apply` of each of `events` in order, the notes between two supersessions staged
    at once."""
    start = 0
    for at, event in enumerate(events):
        if "supersedes" in event.data:  # after the notes before it, as one by one
            memory = add_memories(state, events[start : at + 1], "memory", None)[-1]
            start = at + 1
            for old in event.data["supersedes"]:
                if old in state.memories and old != memory.id:
                    state.supersede(state.memories[old], memory.id)
    if start < len(events):
        add_memories(state, events[start:], "memory", None)


def add_memory(state: State, event: Event, kind: str, meta: dict[str, Any] | None) -> Memory:
    """Register the note's memory, its words, and the links among its key concepts."""
    return add_memories(state, [event], kind, meta)[0]


def add_memories(
    state: State, events: list[Event], kind: str, meta: dict[str, Any] | None
) -> list[Memory]:
    """`add_memory` of each of `events` in order, staged at once."""
    memories = []
    for event in events:
        data = event.data
        concepts = data["concepts"]
        core, matched = data.get("tiers") or (len(concepts), len(concepts))
        memories.append(
            Memory(
                str(event.position),
                data["text"],
                concepts,  # made a tuple of the state's own strings as it is staged
                event.agent,
                event.ts,
                data["importance"],
                event.user,
                0.0,
                core,
                matched,
                kind,
                meta,
                session=event.session,
                namespace=event.namespace,
            )
        )
    indices = state.stage_memories(memories, [e.data.get("labels", {}) for e in events])
    # Supplement terms only verify a match; they make no links.
    state.counts.add_windows(
        [i[: min(m.matched, LINKED_CONCEPTS)] for i, m in zip(indices, memories, strict=True)],
        LINK_WINDOW,
        len(state.concepts),
    )
    return memories


def without_labels(data: Payload) -> Payload:
    """v1 -> v2: no words were stored, so each concept stands for itself."""
    return {**data, "labels": {}}


MEMORY_WRITTEN = register(
    EventType(
        "memory.written",
        2,
        check,
        apply,
        build,
        upcasters={1: without_labels},
        keeps_staged=True,
        apply_run=apply_run,
    )
)
