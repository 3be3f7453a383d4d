"""Checked notes staged as columns, as every fold stages them: no Event, payload dict or
Memory object is made of a note, and its row is a block's from the start.

A note checked against its payload rule (engine/events/note_payload.py) gives its concepts'
indices, its link window and its fields to these lists as it is folded, and its decoded
envelope is let go at once (kept until the end of a run, decoded notes went cold: the
columnar runs of 2b1ed56, reverted, lost so). Before any other event (a rating looks notes
up by id), at STAGED_AT_MOST staged notes and at the end of a fold, the notes staged
become a block of rows (`State.place_notes`), made into objects only when something asks
for one, as a snapshot's rows are; they are indexed and their words counted with the other
staged notes (engine/state/staged_notes.py).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from assocmem.engine.state.cooccurrence import LINK_WINDOW, LINKED_CONCEPTS
from assocmem.engine.state.memory_columns import NAMED, coded, named_fields, offsets_of
from assocmem.engine.state.memory_rows import LoadedMemories

if TYPE_CHECKING:
    from assocmem.engine.events.checked_note import ColumnNote
    from assocmem.engine.state.state import State

KINDS = {"memory.written": "memory", "activity.logged": "activity"}


class NoteColumns:
    """The notes staged since the last block: a tuple of fields each, their concepts'
    indices one after another, and their words."""

    __slots__ = ("notes", "concepts", "meta", "labels")

    def __init__(self) -> None:
        self.notes: list[tuple[Any, ...]] = []
        """Per note: position, text, concepts, core, matched, ts, importance, agent, user,
        session, namespace and kind."""
        self.concepts = array("i")
        """Every note's concept indices, one note after another."""
        self.meta: dict[int, dict[str, Any]] = {}
        """Per activity, by its place among these notes: its category, tags and source; per
        memory with metadata, its metadata."""
        self.labels: list[dict[str, str]] = []

    def __len__(self) -> int:
        return len(self.notes)

    def add(self, state: State, note: ColumnNote) -> None:
        """Stage `note`: intern its concepts and count its link window now, as
        memory.written's handler does (engine/events/memory_written.py)."""
        envelope = note.envelope
        data = envelope.data
        indices = state.interned(data.concepts, note.indices, note.new)
        count = len(indices)
        core, matched = data.tiers or (count, count)
        state.counts.add_window(
            indices[: min(matched, LINKED_CONCEPTS)], LINK_WINDOW, len(state.concepts)
        )
        kind = KINDS[note.type]
        if kind == "activity":
            self.meta[len(self.notes)] = {
                "category": data.category,  # type: ignore[union-attr]
                "tags": data.tags,  # type: ignore[union-attr]
                "source": data.source,  # type: ignore[union-attr]
            }
        else:
            meta: dict[str, Any] = {"metadata": data.metadata} if data.metadata else {}  # type: ignore[union-attr]
            if data.expires_at is not None:  # type: ignore[union-attr]
                meta["expires_at"] = data.expires_at  # type: ignore[union-attr]
            if meta:
                self.meta[len(self.notes)] = meta
        self.notes.append(
            (
                note.position,
                data.text,
                count,
                core,
                matched,
                envelope.ts,
                data.importance,
                envelope.agent,
                envelope.user,
                envelope.session,
                envelope.namespace,
                kind,
            )
        )
        self.concepts.extend(indices)
        self.labels.append(data.labels)

    def block(self, start: int) -> tuple[LoadedMemories, dict[str, np.ndarray]]:
        """The staged notes as rows `start`, `start + 1`, ..., and their numbers for the
        state's columns."""
        fields = list(zip(*self.notes, strict=True))
        positions, texts, lengths, core, matched, ts, importance = fields[:7]
        encoded = [text.encode() for text in texts]
        count = len(encoded)
        block = LoadedMemories(
            start=start,
            ids=list(map(str, positions)),
            text_bytes=memoryview(b"".join(encoded)),
            text_offsets=offsets_of(np.fromiter(map(len, encoded), dtype=np.int64, count=count)),
            concepts=np.array(self.concepts, dtype=np.int32),
            offsets=offsets_of(np.array(lengths, dtype=np.int64)),
            core=np.array(core, dtype=np.int32),
            matched=np.array(matched, dtype=np.int32),
            **named_fields(dict(zip(NAMED, map(coded, fields[7:]), strict=True))),
            meta=self.meta,
            superseded_by={},
        )
        numbers = {
            "ts": np.array(ts, dtype=np.float64),
            "importance": np.array(importance, dtype=np.int8),
            "valence": np.zeros(count, dtype=np.float64),
            "accesses": np.zeros(count, dtype=np.int32),
        }
        return block, numbers
