"""How a link got its weight, and what happened to a memory: the events behind them.

The history is read off the fold itself, event by event, so it can never disagree with
the state: the written count of a pair is watched where the fold counts co-occurrences,
its learned delta where feedback sets it.

A link's history needs only the events that name one of its concepts, and the
consolidations: its count comes from the notes and units naming both, its taught delta
from feedback whose question names one of them on memories carrying the other, and a
consolidation recounts and decays it from those alone. So the fold the audit watches holds
those events only, and the log's other entries are not even decoded (`link_filter`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator

from assocmem.engine.events.consolidation import Rule, faded
from assocmem.engine.events.envelope import Event
from assocmem.engine.events.fold import fold
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.events.memory_deleted import MEMORY_DELETED
from assocmem.engine.events.registry import BUILT_IN
from assocmem.engine.history.link_index import LinkIndex
from assocmem.engine.position import Position
from assocmem.engine.state.cooccurrence import Cooccurrence
from assocmem.engine.state.link_rule import link_weight
from assocmem.engine.state.state import State
from assocmem.engine.state.stream import anchors_of, taught


@dataclasses.dataclass(frozen=True, slots=True)
class LinkChange:
    position: Position
    ts: float
    agent: str
    type: str
    written: int
    """Co-occurrences this event added (taken off, for a consolidation)."""
    taught: float
    """Change of the learned delta."""
    count: int
    learned: float
    weight: float
    """Count + learned delta after the event (never below zero)."""


@dataclasses.dataclass(frozen=True, slots=True)
class LinkHistory:
    source: str
    target: str
    changes: tuple[LinkChange, ...]
    labels: tuple[str, str] = ("", "")
    """The words people read for the two concepts, at the end of the history."""

    @property
    def written_share(self) -> float:
        """Share of the link's weight that was written, not taught (0 for no weight)."""
        last = self.changes[-1] if self.changes else None
        if last is None or last.weight <= 0:
            return 0.0
        return min(1.0, last.count / last.weight)


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryEvent:
    position: Position
    ts: float
    agent: str
    type: str
    detail: dict[str, object]


class _CountingPair(Cooccurrence):
    """The fold's co-occurrence counts, telling how often one pair of concepts was added.

    Asked for another pair's count (a rating's floor for the pairs it teaches), it answers
    0 without looking: the history reports the one pair, whose delta no other pair's
    floor moves, and the lookups were a tenth of an audit at a million events."""

    def __init__(self, state: State, names: tuple[str, str]) -> None:
        super().__init__()
        self._state = state
        self._names = names
        self.added = 0

    def add_window(self, indices: list[int], window: int, size: int) -> None:
        super().add_window(indices, window, size)
        at = self._pair()
        if at is None or len(indices) < 2:
            return
        spots = [indices.index(i) if i in indices else None for i in at]
        if None not in spots and abs(spots[0] - spots[1]) < window:  # type: ignore[operator]
            self.added += 1

    def count(self, i: int, j: int) -> int:
        at = self._pair()
        if at is None or {i, j} != set(at):
            return 0
        return super().count(i, j)

    def _pair(self) -> tuple[int, int] | None:
        at = [self._state.concept_index.get(n) for n in self._names]
        return None if at[0] is None or at[1] is None else (at[0], at[1])


NOTES = frozenset(record.name for record in BUILT_IN if record.counts_concepts)
"""Event types whose concepts are counted together: notes, activities, documents."""
NAMING = frozenset(record.name for record in BUILT_IN if record.names_concepts)
"""Event types that concern a link only when they name one of its concepts."""
NEVER_MOVE = frozenset(record.name for record in BUILT_IN if not record.moves_links)
"""Event types that change no link. A type these do not name (one added later) is
watched: an audit then folds it, as it would any type that may move a link."""
_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_START = b'{"v":'
_TYPE_KEY = b',"type":"'


def link_filter(source: str, target: str) -> Callable[[Position, bytes], bool]:
    """Whether a stored entry may concern the link: False only for an entry of a type
    that names concepts, naming neither, or of a type that changes no link, told from its
    bytes (as `encode_event` writes them) without decoding it. Anything unusual (another
    layout, a second "type" key, a \\u escape, a concept JSON writes escaped) is decoded
    and judged by the fold."""
    if _ESCAPED.search(source) or _ESCAPED.search(target):
        return lambda position, raw: True
    # A concept is named only as a JSON string (in a list of concepts, or a key of labels):
    # quoted, so that text merely holding the word ("latest" for "test") is not decoded.
    names = (b'"%s"' % source.encode(), b'"%s"' % target.encode())
    slashed = b"/" in names[0] or b"/" in names[1]  # "\\/" is JSON for "/" too
    naming = {kind.encode() for kind in NAMING}
    never = {kind.encode() for kind in NEVER_MOVE}

    def may_concern(position: Position, raw: bytes) -> bool:
        if names[0] in raw or names[1] in raw:
            return True
        kind = _stored_type(raw)
        if kind is None or (kind not in naming and kind not in never):
            return True
        return raw.count(b'"type":') != 1 or b"\\u" in raw or (slashed and b"\\/" in raw)

    return may_concern


def _stored_type(raw: bytes) -> bytes | None:
    """An entry's event type where `encode_event` writes it; None for another layout."""
    if not raw.startswith(_START):
        return None
    at = raw.find(_TYPE_KEY, 5, 24)
    end = raw.find(b'"', at + 9, at + 64) if at > 0 else -1
    return raw[at + 9 : end] if end >= 0 else None


_NOTE_TYPES = frozenset(kind.encode() for kind in NOTES)
_CONSOLIDATED = LINKS_CONSOLIDATED.name.encode()


def may_rate(raw: bytes) -> bool:
    """Whether a stored entry may be a rating (or of a type `rated_memories` must see):
    False only for a note, told from its bytes; anything unusual is decoded and judged."""
    return _stored_type(raw) not in _NOTE_TYPES or raw.count(b'"type":') != 1


def rated_memories(events: Iterable[Event], source: str, target: str) -> frozenset[str] | None:
    """The memories a link's history must hold whatever they name: those rated by feedback
    whose question names either concept, and those deleted. (A memory superseded or merged away still counts
    and can still be rated, so supersessions and merges need no more.) None when an event
    of a type not known here may move the link: then every memory naming one is held."""
    held: set[str] = set()
    for event in events:
        if event.type in NOTES or _bearing(event, source, target) != WATCHED:
            continue
        if event.type == "feedback.given":
            held.update(event.data.get("memory_ids", ()))
        elif event.type == MEMORY_DELETED.name:  # takes off what its note counted
            held.add(event.data.get("memory_id"))  # type: ignore[arg-type]
        elif event.type != LINKS_CONSOLIDATED.name:
            return None
    return frozenset(held)


SETS_COUNTS = frozenset({LINKS_CONSOLIDATED.name, MEMORY_DELETED.name})
"""Event types that take counts off (or set them), where the others add: a link's history
reads their effect off the counts before and after."""
IGNORED, BATCHED, WATCHED = 0, 1, 2
"""What an event is to a link's history (`_bearing`)."""


def _bearing(event: Event, source: str, target: str) -> int:
    """IGNORED: it names neither concept, nothing the history needs. BATCHED: it names one
    (a memory carrying one may be rated later) and cannot move the link: folded, not
    looked at. WATCHED: it may move the link (a note or unit naming both, a rating whose
    question names one, a consolidation, a type not known here): folded, then looked at."""
    if event.type == "feedback.given":
        question = event.data.get("concepts") or ()
        return WATCHED if source in question or target in question else IGNORED
    if event.type not in NOTES:
        return IGNORED if event.type in NEVER_MOVE else WATCHED
    named = [(source in unit, target in unit) for unit in _units(event)]
    if any(has_source and has_target for has_source, has_target in named):
        return WATCHED
    return BATCHED if any(has_source or has_target for has_source, has_target in named) else IGNORED


def _units(event: Event) -> list[list[str]]:
    """The concept lists of a note (one) or a document (one a unit), which link and label."""
    data = event.data
    if event.type == "document.ingested":
        return data.get("units") or []
    return [data.get("concepts") or []]


def link_history(
    events: Iterable[Event],
    source: str,
    target: str,
    rated: frozenset[str] | None = None,
    since: LinkIndex | None = None,
) -> LinkHistory:
    """Every event that changed the link source -- target, with the weight after it.

    One fold of the events that bear on the link, watched between events: a fold per
    watched event indexed its notes each time (a tenth of the events, half the time).

    `rated`: the memories that must be held whatever they name (`rated_memories` of these
    events). A note naming only one of the concepts moves the link only if it is rated
    later, so the others are not folded: at 240,000 commit messages they were 95% of the
    fold of a frequent concept's link. Their words still count towards the labels.

    `since`: the link's index in a state folded up to a position (engine/history/link_index.py),
    `events` up to there being those it names and the rated notes: the words written up to
    there are the state's, and only later notes count more."""
    state = State()
    counter = state.counts = _CountingPair(state, (source, target))
    words = _Words(source, target, since)
    changes: list[LinkChange] = []
    last = [0, 0.0]  # count and learned delta after the last change

    def watch(event: Event) -> None:
        count, learned = last
        written = counter.added - count
        if event.type in SETS_COUNTS:
            written = _count(state, source, target) - count
        now = _learned(state, source, target)
        if written or now != learned:
            count += written
            weight = float(link_weight(float(count), now))
            changes.append(
                LinkChange(
                    state.position,
                    event.ts,
                    event.agent,
                    event.type,
                    written,
                    round(now - learned, 9),
                    count,
                    now,
                    weight,
                )
            )
            last[:] = count, now
        counter.added = last[0]

    def bearing() -> Iterator[Event]:
        for event in events:
            kind = _bearing(event, source, target)
            if kind == IGNORED:
                continue
            if since is None or not since.covers(event.position):  # type: ignore[arg-type]
                words.note(event)
            if kind == BATCHED and rated is not None and str(event.position) not in rated:
                continue
            yield event
            if kind == WATCHED:  # the fold asks for the next event once it applied this one
                watch(event)

    fold(state, bearing())
    return LinkHistory(source, target, tuple(changes), words.labels())


class _Words:
    """The words written for two concepts, counted as the fold counts them
    (`State.note_surfaces`, one use at a time), for their labels."""

    def __init__(self, source: str, target: str, since: LinkIndex | None = None) -> None:
        self._names = (source, target)
        self._state = State()
        self._at = [self._state.intern(source), self._state.intern(target)]
        if since is not None:  # the counts up to the index's state, as it had them
            for at, surfaces, label in zip(self._at, since.surfaces, since.labels, strict=True):
                self._state.surfaces[at] = dict(surfaces)
                self._state.set_label(at, label)

    def note(self, event: Event) -> None:
        if event.type not in NOTES:
            return
        labels = event.data.get("labels") or {}
        for unit in _units(event):
            used = [at for at, name in zip(self._at, self._names, strict=True) if name in unit]
            if used:  # each concept's label follows from its own uses alone
                self._state.note_surfaces(used, labels)

    def labels(self) -> tuple[str, str]:
        return (self._state.label(self._names[0]), self._state.label(self._names[1]))


def memory_filter(memory_id: str) -> Callable[[Position, bytes], bool]:
    """Whether a stored entry may concern the memory: its write (at its id), an entry
    naming its id (ids are positions: digits and a dash, which JSON writes as they are)
    or holding an escape, or a consolidation (which may decay the links ratings taught it)."""
    named = memory_id.encode()
    return lambda position, raw: (
        named in raw
        or str(position) == memory_id
        or b"\\u" in raw
        or _stored_type(raw) == _CONSOLIDATED
    )


def memory_history(events: Iterable[Event], memory_id: str) -> list[MemoryEvent]:
    """The memory's write, its accesses, ratings, importance changes, supersession and
    deletion, and the consolidations since its write (`with_taught_links` keeps those that
    merged it or decayed a link a rating taught it)."""
    found: list[MemoryEvent] = []
    for event in events:
        data = event.data
        detail: dict[str, object] | None = None
        if event.type == LINKS_CONSOLIDATED.name and not found:
            continue  # before the memory was written (or an id never written)
        if str(event.position) == memory_id:
            detail = {"text": data.get("text"), "concepts": data.get("concepts")}
        elif memory_id in data.get("supersedes", ()):
            detail = {"superseded_by": str(event.position)}
        elif event.type == LINKS_CONSOLIDATED.name:
            detail = {"rule": data.get("rule")}
            if memory_id in _merged(data):
                detail |= {"superseded_by": _merged(data)[memory_id], "merged": True}
        elif event.type == "feedback.given" and memory_id in data.get("memory_ids", ()):
            detail = {"outcome": data.get("outcome"), "concepts": data.get("concepts")}
        elif event.type == "memory.accessed" and memory_id in data.get("memory_ids", ()):
            detail = {"hits": data["hits"][data["memory_ids"].index(memory_id)]}
        elif event.type == "memory.importance_set" and data.get("memory_id") == memory_id:
            detail = {"importance": data.get("importance")}
        elif event.type == "memory.deleted" and data.get("memory_id") == memory_id:
            detail = {"deleted": True}
        if detail is not None and event.position is not None:
            found.append(MemoryEvent(event.position, event.ts, event.agent, event.type, detail))
    return found


def _merged(data: dict[str, object]) -> dict[str, str]:
    return {old: kept for old, kept in data.get("merged", ())}  # type: ignore[attr-defined]


def _count(state: State, source: str, target: str) -> int:
    i, j = state.concept_index.get(source), state.concept_index.get(target)
    return 0 if i is None or j is None else state.counts.count(i, j)


def _learned(state: State, source: str, target: str) -> float:
    i, j = state.concept_index.get(source), state.concept_index.get(target)
    if i is None or j is None:
        return 0.0
    return state.learned.get(i, {}).get(j, 0.0)


def with_taught_links(state: State, memory_id: str, found: list[MemoryEvent]) -> list[MemoryEvent]:
    """A memory's history (`memory_history`), each rating saying which link from a stream
    neighbour to the memory it taught and the link's learned delta after it, as the fold
    teaches them (engine/events/feedback_given.py), and each consolidation that decayed
    those links saying what it left of them (engine/events/consolidation.py)."""
    memory = state.memories.get(memory_id)
    if memory is None:
        return [e for e in found if e.type != LINKS_CONSOLIDATED.name or e.detail.get("merged")]
    values: dict[int, float] = {}
    taught_at: dict[int, tuple[Position, bool]] = {}
    consolidated_at = 0.0
    shown = []
    for event in found:
        if event.type == LINKS_CONSOLIDATED.name:
            rule = Rule.of(event.detail["rule"])  # type: ignore[arg-type]
            decayed = _decayed_links(values, taught_at, consolidated_at, rule)
            consolidated_at = max(consolidated_at, rule.at)
            if decayed or event.detail.get("merged"):
                links = [
                    {"from": state.rows.id_of(anchor), "written": after, "taught": value}
                    for anchor, after, value in decayed
                ]
                shown.append(dataclasses.replace(event, detail={**event.detail, "links": links}))
            continue
        if event.type != "feedback.given":
            shown.append(event)
            continue
        named = (state.concept_index.get(c) for c in event.detail["concepts"])  # type: ignore[union-attr]
        asked = {index for index in named if index is not None}
        links = []
        for anchor, after in anchors_of(state, memory.row, asked):
            anchor_id = state.rows.id_of(anchor)
            if Position.parse(anchor_id) < event.position:  # the fold saw only what came before
                values[anchor] = taught(values.get(anchor, 0.0), float(event.detail["outcome"]))  # type: ignore[arg-type]
                taught_at[anchor] = (event.position, after)
                links.append(
                    {
                        "from": anchor_id,
                        "written": "after" if after else "before",
                        "taught": values[anchor],
                    }
                )
        shown.append(dataclasses.replace(event, detail={**event.detail, "links": links}))
    return shown


def _decayed_links(
    values: dict[int, float],
    taught_at: dict[int, tuple[Position, bool]],
    consolidated_at: float,
    rule: Rule,
) -> list[tuple[int, str, float]]:
    """What a consolidation under `rule` did to the links ratings taught a memory (`values`
    by anchor row, changed in place, as the fold changes them): (anchor, written, delta
    after; 0 once dropped) of each it decayed."""
    if not rule.decays_memory_links:
        return []
    taught = {anchor: (value, taught_at[anchor][0]) for anchor, value in values.items()}
    decayed = []
    for anchor, left in faded(taught, consolidated_at, rule).items():
        if left is None:
            del values[anchor]
        else:
            values[anchor] = left
        decayed.append((anchor, "after" if taught_at[anchor][1] else "before", left or 0.0))
    return decayed
