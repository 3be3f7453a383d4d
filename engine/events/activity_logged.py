"""activity.logged: an entry of the activity log (episodic memory), a memory of its own
kind with a category, tags and a source. v2 adds `labels`, as memory.written's v2."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.memory_written import add_memory, check_note, without_labels
from assocmem.engine.events.payload import MAX_TAGS, check_label
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
    check_note(data)
    check_label(data.get("category"), "category")
    check_label(data.get("source"), "source", optional=True)
    tags = data.get("tags")
    if not isinstance(tags, list) or len(tags) > MAX_TAGS:
        raise InvalidEvent(f"tags {quoted(tags)} is invalid: expected a list of at most {MAX_TAGS}")
    for tag in tags:
        check_label(tag, "tags item")


def apply(state: State, event: Event) -> None:
    data = event.data
    meta = {"category": data["category"], "tags": data["tags"], "source": data.get("source")}
    add_memory(state, event, "activity", meta)


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
