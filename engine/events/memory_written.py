"""memory.written: a note, with the concepts extracted when it was appended.

v2 adds `labels` (concept -> the word the text wrote for it, where the two differ;
optional); v1 payloads are read with none, so their concepts are shown as themselves.
`metadata` (a flat object of strings, numbers and booleans; optional) and `expires_at`
(unix seconds; optional) need no version: a payload without them has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.events.note_payload import Written, checked, note_of, stage
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import EXTRACTOR_VERSION, Extraction

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event


def build(
    text: str,
    extraction: Extraction,
    importance: int,
    supersedes: list[str] | None = None,
    metadata: dict[str, object] | None = None,
    expires_at: float | None = None,
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
    if metadata:
        data["metadata"] = dict(metadata)
    if expires_at is not None:
        data["expires_at"] = expires_at
    return data


def check(data: Payload) -> None:
    checked(data, Written)


def apply(state: State, event: Event) -> None:
    stage(state, note_of(event, Written, state.concept_index))


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
