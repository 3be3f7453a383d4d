"""activity.logged: an entry of the activity log (episodic memory), a memory of its own
kind with a category, tags and a source. v2 adds `labels`, as memory.written's v2."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.events.memory_written import without_labels
from assocmem.engine.events.note_payload import Activity, checked, note_of, stage
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import EXTRACTOR_VERSION, Extraction

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(
    text: str,
    extraction: Extraction,
    importance: int,
    category: str,
    tags: list[str],
    source: str | None,
) -> Payload:
    return {
        "text": text,
        "concepts": list(extraction.concepts),
        "tiers": extraction.tiers,
        "labels": dict(extraction.labels),
        "importance": importance,
        "category": category,
        "tags": list(tags),
        "source": source,
        "extractor": EXTRACTOR_VERSION,
    }


def check(data: Payload) -> None:
    checked(data, Activity)


def apply(state: State, event: Event) -> None:
    stage(state, note_of(event, Activity, state.concept_index))


ACTIVITY_LOGGED = EventType(
    "activity.logged",
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
