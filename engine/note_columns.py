"""Checked notes staged as columns, as the workers fold them: no Event, payload dict or
Memory object is made of a note, and its row is a block's from the start.

A note the decoder has checked (engine/checked_note.py) gives its concepts' indices, its
link window and its fields to these lists as it is folded, and its decoded envelope is let
go at once (kept until the end of a run, decoded notes went cold: the columnar runs of
2b1ed56, reverted, lost so). Before any other event, and between two chunks of the log,
the notes staged become a block of rows (`State.place_notes`), made into objects only when
something asks for one, as a snapshot's rows are; they are indexed and their words counted
with the other staged notes (engine/staged_notes.py). A fold of commit messages made an
Event, a payload, a Memory and then, at the seal, columns of every note.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from .cooccurrence import LINK_WINDOW, LINKED_CONCEPTS
from .memory_columns import coded, offsets_of
from .memory_rows import LoadedMemories

if TYPE_CHECKING:
    from .checked_note import ColumnNote
    from .state import State

KINDS = {"memory.written": "memory", "activity.logged": "activity"}


class NoteColumns:
    """The notes staged since the last block, field by field."""

    __slots__ = (
        "ids",
        "texts",
        "concepts",
        "lengths",
        "core",
        "matched",
        "ts",
        "importance",
        "agents",
        "users",
        "sessions",
        "namespaces",
        "kinds",
        "meta",
        "labels",
    )

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.concepts = array("i")
        """Every note's concept indices, one note after another."""
        self.lengths: list[int] = []
        self.core: list[int] = []
        self.matched: list[int] = []
        self.ts: list[float] = []
        self.importance: list[int] = []
        self.agents: list[str] = []
        self.users: list[str | None] = []
        self.sessions: list[str | None] = []
        self.namespaces: list[str | None] = []
        self.kinds: list[str] = []
        self.meta: dict[int, dict[str, Any]] = {}
        """Per activity, by its place among these notes: its category, tags and source."""
        self.labels: list[dict[str, str]] = []

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, state: State, note: ColumnNote) -> None:
        """Stage `note`: intern its concepts and count its link window now, as
        memory.written's handler does (engine/events/memory_written.py)."""
        envelope = note.envelope
        data = envelope.data
        indices = state.indices_of(data.concepts)
        count = len(indices)
        core, matched = data.tiers or (count, count)
        state.counts.add_window(
            indices[: min(matched, LINKED_CONCEPTS)], LINK_WINDOW, len(state.concepts)
        )
        kind = KINDS[note.type]
        if kind == "activity":
            self.meta[len(self.ids)] = {
                "category": data.category,  # type: ignore[union-attr]
                "tags": data.tags,  # type: ignore[union-attr]
                "source": data.source,  # type: ignore[union-attr]
            }
        self.ids.append(str(note.position))
        self.texts.append(data.text)
        self.concepts.extend(indices)
        self.lengths.append(count)
        self.core.append(core)
        self.matched.append(matched)
        self.ts.append(envelope.ts)
        self.importance.append(data.importance)
        self.agents.append(envelope.agent)
        self.users.append(envelope.user)
        self.sessions.append(envelope.session)
        self.namespaces.append(envelope.namespace)
        self.kinds.append(kind)
        self.labels.append(data.labels)

    def block(self, start: int) -> tuple[LoadedMemories, dict[str, np.ndarray]]:
        """The staged notes as rows `start`, `start + 1`, ... (what a seal would have made
        of them), and their numbers for the state's columns."""
        texts = [text.encode() for text in self.texts]
        count = len(self.ids)
        agent, agents = coded(self.agents)
        user, users = coded(self.users)
        session, sessions = coded(self.sessions)
        namespace, namespaces = coded(self.namespaces)
        kind, kinds = coded(self.kinds)  # type: ignore[arg-type]
        block = LoadedMemories(
            start=start,
            ids=self.ids,
            text_bytes=memoryview(b"".join(texts)),
            text_offsets=offsets_of(np.fromiter(map(len, texts), dtype=np.int64, count=count)),
            concepts=np.array(self.concepts, dtype=np.int32),
            offsets=offsets_of(np.array(self.lengths, dtype=np.int64)),
            core=np.array(self.core, dtype=np.int32),
            matched=np.array(self.matched, dtype=np.int32),
            agent=agent,
            agents=agents,
            user=user,
            users=users,
            session=session,
            sessions=sessions,
            namespace=namespace,
            namespaces=namespaces,
            kind=kind,
            kinds=kinds,
            meta=self.meta,
            superseded_by={},
        )
        numbers = {
            "ts": np.array(self.ts, dtype=np.float64),
            "importance": np.array(self.importance, dtype=np.int8),
            "valence": np.zeros(count, dtype=np.float64),
            "accesses": np.zeros(count, dtype=np.int32),
        }
        return block, numbers
