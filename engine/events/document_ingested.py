"""document.ingested: a document cut into units (sentences or windows) whose concepts feed
the links; the document itself is never returned by a read. v2 adds `labels` for the
concepts of all its units."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assocmem.engine.errors import InvalidEvent, quoted
from assocmem.engine.events.memory_written import without_labels
from assocmem.engine.events.payload import check_concepts, check_label, check_labels
from assocmem.engine.events.record import EventType, Payload
from assocmem.engine.state.cooccurrence import LINK_WINDOW
from assocmem.engine.state.memory import COMMON, scope_of
from assocmem.engine.state.state import State
from assocmem.engine.text.extraction import EXTRACTOR_VERSION

if TYPE_CHECKING:
    from assocmem.engine.events.envelope import Event

MAX_UNITS = 20_000
"""Sentences or windows in one document.ingested event."""
SCOPES = ("sentence", "window")


def build(
    title: str,
    source: str | None,
    scope: str,
    units: list[list[str]],
    labels: dict[str, str],
) -> Payload:
    named = {c for unit in units for c in unit}
    return {
        "title": title,
        "source": source,
        "scope": scope,
        "units": units,
        "labels": {c: w for c, w in labels.items() if c in named},
        "extractor": EXTRACTOR_VERSION,
    }


def check(data: Payload) -> None:
    check_label(data.get("title"), "title")
    if data.get("scope") not in SCOPES:
        raise InvalidEvent(
            f"scope {quoted(data.get('scope'))} is invalid: expected one of {SCOPES}"
        )
    units = data.get("units")
    if not isinstance(units, list) or not 1 <= len(units) <= MAX_UNITS:
        raise InvalidEvent(f"units is invalid: expected a list of 1 to {MAX_UNITS} concept lists")
    named = set().union(*(check_concepts(unit, f"units[{n}]") for n, unit in enumerate(units)))
    check_labels(data.get("labels", {}), named)


def apply(state: State, event: Event) -> None:
    labels = event.data.get("labels", {})
    scope = scope_of(event)
    for unit in event.data["units"]:
        indices = [state.intern(c) for c in unit]
        state.note_surfaces(indices, labels)
        state.counts.add_window(indices, LINK_WINDOW, len(state.concepts))
        if scope != COMMON and len(indices) >= 2:
            state.private_units.append((scope, indices))
    state.documents += 1


DOCUMENT_INGESTED = EventType(
    "document.ingested",
    2,
    check,
    apply,
    build,
    upcasters={1: without_labels},
    counts_concepts=True,
    names_concepts=True,
)
