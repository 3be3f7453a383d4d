"""Sleep consolidation: what a night's consolidation decides from a state, and how the fold
applies the decision, so a replay reproduces it exactly.

- **Written counts** are counted again from the memories themselves, each memory's
  co-occurrences weighted by its age at the decision time `at`: full weight inside the
  recent window, then halved every written half-life. A link keeps a count of at least 1:
  decay reorders links, it never erases one (pruning does). Document units carry no time
  in the state, so what documents wrote is kept as it is. What consolidation takes off is
  kept beside the counts (`Cooccurrence.reduction`), so the next consolidation starts
  again from every count ever written, not from counts already rounded.
- **Taught deltas** are halved every taught half-life (longer than the written one) for
  the time past the window since they were last taught, or since the previous
  consolidation; one that falls below DROP_TAUGHT is dropped. Those of the links between
  memories (a rated stream neighbour, engine/events/feedback_given.py) too.
- **Pruned concepts** lose every written link; memories carrying them still match them.
  The decision names them: fewer co-occurrences ever written than the minimum (age does
  not make a concept rare), or beyond the vocabulary cap (the ones weighing least after
  decay go first). A concept with a taught link is never pruned.
- **Merged memories**: alive notes of one agent and user with the same text (case,
  spacing and punctuation aside); the newest is kept and supersedes the others.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import scipy.sparse

from assocmem.engine.errors import InvalidEvent
from assocmem.engine.events.payload import check_time
from assocmem.engine.position import Position
from assocmem.engine.state.cooccurrence import (
    COUNT_DTYPE,
    LINK_WINDOW,
    LINKED_CONCEPTS,
    grouped_window_pairs,
)
from assocmem.engine.state.memory import Scope
from assocmem.engine.state.state import State

DAY = 86_400.0
KEPT_COUNT = 2
"""Decay stops here: a link written this often stays followed by a read's default floor, so
age reorders old links behind recent ones but never cuts the way to an old memory."""
DROP_TAUGHT = 0.05
"""A taught delta smaller than this (either sign) is dropped by consolidation."""

Progress = Callable[[float], None]
K = TypeVar("K")


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """The parameters of one consolidation, recorded in its event."""

    at: float
    """Unix time the decision was made at: ages are measured to it."""
    window_days: float = 90.0
    written_half_life_days: float | None = None
    """None: written counts never decay. Off by default: on bench/quality.py every half-life
    tried (180 days to 10 years) cost recall of associations to old notes."""
    taught_half_life_days: float | None = None
    """None: taught deltas never decay. Set it longer than the written one."""
    min_cooccurrence: int = 2
    """A concept whose links were written fewer times than this, all told, is pruned: the
    default takes the links off a word seen in one note beside one other concept, which
    that note's own match already finds."""
    vocabulary_cap: int = 500_000
    """Concepts with links kept at most; the ones with the fewest co-occurrences go first."""
    merge_duplicates: bool = True
    decays_memory_links: bool = True
    """The taught half-life applies to the taught links between memories too. False in the
    consolidations recorded before it did (links.consolidated version 1), so that a log
    replays to the state it made then."""

    def __post_init__(self) -> None:
        check_time(self.at, "at")
        for name in ("merge_duplicates", "decays_memory_links"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidEvent(f"{name} {getattr(self, name)!r} is not true or false")
        for name in ("window_days", "written_half_life_days", "taught_half_life_days"):
            value = getattr(self, name)
            if value is None and name != "window_days":
                continue
            if not isinstance(value, int | float) or not 0 < value <= 36_500:
                raise InvalidEvent(
                    f"{name} {value!r} is out of range: expected 0 to 36500 days"
                    + ("" if name == "window_days" else ", or null for never")
                )
        for name in ("min_cooccurrence", "vocabulary_cap"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidEvent(f"{name} {value!r} is invalid: expected a whole number >= 0")

    def payload(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Rule:
        try:
            return cls(**data)
        except TypeError as exc:
            raise InvalidEvent(f"rule is invalid: {exc}") from exc


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    rule: Rule
    pruned: tuple[str, ...]
    merged: tuple[tuple[str, str], ...]
    """(superseded memory, kept memory)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Effect:
    """What a decision does to a state: the consolidation report."""

    concepts_pruned: int
    links_decayed: int
    links_dropped: int
    taught_decayed: int
    """Taught links decayed, between concepts and between memories (the same for dropped
    and for the delta taken off)."""
    taught_dropped: int
    memories_merged: int
    written_removed: int
    """Co-occurrences taken off."""
    taught_removed: float
    """Taught delta taken off (absolute)."""


def decide(state: State, rule: Rule, progress: Progress | None = None) -> tuple[Decision, Effect]:
    """What consolidating `state` under `rule` would do; the state is left untouched."""
    decayed = _decayed_counts(state, rule, progress)
    taught = _decayed_taught(state, rule)
    pruned = _pruned(state, decayed, taught, rule)
    merged = _duplicates(state) if rule.merge_duplicates else []
    decision = Decision(
        rule, tuple(state.concepts[i] for i in pruned), tuple((a, b) for a, b in merged)
    )
    between = decayed_memory_links(state, rule)
    return decision, _effect(state, _without(decayed, pruned), taught, between, decision)


def apply_decision(state: State, decision: Decision) -> None:
    """The fold's side: apply `decision` to the state at the event's position."""
    rule = decision.rule
    pruned = [state.concept_index[c] for c in decision.pruned if c in state.concept_index]
    kept = _without(_decayed_counts(state, rule, None), pruned)
    written = state.counts.written()
    state.counts.load(kept, written - kept)
    for (i, j), value in _decayed_taught(state, rule).items():
        if value is None:
            state.drop_learned(i, j)
        else:
            state.rescale_learned(i, j, value)
    for link, value in decayed_memory_links(state, rule).items():
        if value is None:
            del state.memory_links[link]
        else:
            state.memory_links[link] = (value, state.memory_links[link][1])
    for i, j in list(state.learned_at):
        learned = state.learned[i][j]
        if learned < 0:  # unlearns what is written, no more (the floor is never above 0)
            lowest = -float(state.counts.count(i, j))
            if learned < lowest:
                state.rescale_learned(i, j, lowest)
    # Each id looked up in one pass in C: a consolidation may merge most of a large
    # tenant's memories, and asking `in state.memories` of each was a long step
    rows = state.memories.rows_of([old for old, _ in decision.merged])
    kept = state.memories.rows_of([new for _, new in decision.merged])
    alive = state.alive.values  # a view: a memory superseded here is dead for the next pair
    for (old, new), row, new_row in zip(decision.merged, rows, kept, strict=True):
        if row is not None and new_row is not None and old != new and alive[row]:
            state.supersede_row(row, new)
    state.consolidated_at = max(state.consolidated_at, rule.at)


def _decayed_counts(state: State, rule: Rule, progress: Progress | None) -> scipy.sparse.csr_array:
    """Every written count, with the memories' share of it weighted by their age."""
    size = len(state.concepts)
    written = state.counts.written()
    half_life = rule.written_half_life_days
    if half_life is None:  # every weight is 1: the counts as written, without a recount
        if progress is not None:
            progress(1.0)
        return written
    ages = rule.at - state.ts.values
    weight_of = 0.5 ** (np.maximum(ages - rule.window_days * DAY, 0.0) / (half_life * DAY))
    lists, owners = [], []
    step = max(1, len(state.rows) // 100)
    for row in range(len(state.rows)):
        linked = state.rows.linked(row, LINKED_CONCEPTS)
        if len(linked) >= 2 and row not in state.deleted:  # its links were taken off
            lists.append(linked)
            owners.append(row)
        if progress is not None and row % step == 0:
            progress(row / max(1, len(state.rows)))
    if not lists:
        return written
    first, second, group = grouped_window_pairs(lists, LINK_WINDOW)
    in_log_order = np.argsort(group, kind="stable")  # each pair's weights summed as before
    first, second = first[in_log_order].astype(np.int64), second[in_log_order].astype(np.int64)
    weight = weight_of[np.asarray(owners, dtype=np.int64)[group[in_log_order]]]
    keys = np.concatenate([first * size + second, second * size + first])
    keys, inverse = np.unique(keys, return_inverse=True)
    weight = np.concatenate([weight, weight])
    by_memories = np.bincount(inverse, minlength=len(keys)).astype(COUNT_DTYPE)
    decayed = np.maximum(
        np.minimum(by_memories, KEPT_COUNT),
        np.rint(np.bincount(inverse, weights=weight, minlength=len(keys))),
    )
    rows, cols = keys // size, keys % size

    def matrix(values: np.ndarray) -> scipy.sparse.csr_array:
        return scipy.sparse.csr_array(
            (values.astype(COUNT_DTYPE), (rows, cols)), shape=(size, size)
        )

    from_documents = written - matrix(by_memories)
    result = (from_documents + matrix(decayed)).tocsr()
    result.eliminate_zeros()
    result.sort_indices()
    if progress is not None:
        progress(1.0)
    return result


def _decayed_taught(state: State, rule: Rule) -> dict[tuple[int, int], float | None]:
    """Each taught delta that decays: its value after, or None when it is dropped."""
    learned = state.learned
    taught = {
        (i, j): (learned.get(i, {}).get(j, 0.0), at) for (i, j), at in state.learned_at.items()
    }
    return faded(taught, state.consolidated_at, rule)


def decayed_memory_links(state: State, rule: Rule) -> dict[tuple[int, int], float | None]:
    """Each taught link between memories (anchor row, rated row) that decays: its delta
    after, or None when it is dropped."""
    if not rule.decays_memory_links:
        return {}
    return faded(state.memory_links, state.consolidated_at, rule)


def faded(
    taught: Mapping[K, tuple[float, Position]], consolidated_at: float, rule: Rule
) -> dict[K, float | None]:
    """Of taught deltas (each with the position it was last taught at), those a
    consolidation under `rule` decays, after the previous one at `consolidated_at`: each
    halved every taught half-life for the time past the window since it was last taught, or
    since the previous consolidation; None once below DROP_TAUGHT."""
    if rule.taught_half_life_days is None:
        return {}
    half_life, window = rule.taught_half_life_days * DAY, rule.window_days * DAY
    found: dict[K, float | None] = {}
    for key, (value, taught_at) in taught.items():
        exposed = rule.at - max(taught_at.ms / 1000 + window, consolidated_at)
        if exposed > 0:
            after = value * 0.5 ** (exposed / half_life)
            found[key] = None if abs(after) < DROP_TAUGHT else after
    return found


def _pruned(
    state: State,
    counts: scipy.sparse.csr_array,
    taught: dict[tuple[int, int], float | None],
    rule: Rule,
) -> list[int]:
    written = np.asarray(state.counts.written().sum(axis=1)).ravel()
    marginals = np.asarray(counts.sum(axis=1)).ravel()
    protected = np.zeros(len(marginals), dtype=bool)
    for i, row in state.learned.items():
        for j, value in row.items():
            if value and taught.get((min(i, j), max(i, j)), value) is not None:
                protected[i] = True
    linked = marginals > 0
    weak = linked & (written < rule.min_cooccurrence) & ~protected
    survivors = np.flatnonzero(linked & ~weak)
    over = len(survivors) - rule.vocabulary_cap
    if over > 0:
        candidates = survivors[~protected[survivors]]
        order = np.lexsort((candidates, marginals[candidates]))  # fewest first, then by index
        weak[candidates[order[:over]]] = True
    return np.flatnonzero(weak).tolist()


def _without(counts: scipy.sparse.csr_array, pruned: list[int]) -> scipy.sparse.csr_array:
    if not pruned:
        return counts
    keep = np.ones(counts.shape[0], dtype=COUNT_DTYPE)
    keep[pruned] = 0
    mask = scipy.sparse.diags_array(keep, format="csr", dtype=COUNT_DTYPE)
    result = (mask @ counts @ mask).tocsr()
    result.eliminate_zeros()
    result.sort_indices()
    return result


_NOT_WORDS = re.compile(r"[\W_]+")
_ASCII_WORDS = (
    bytes(ord(chr(c).lower()) if chr(c).isalnum() else ord(" ") for c in range(128)) + b" " * 128
)
"""Lower case for ASCII letters and digits, a space for the rest: `_words` of ASCII text."""


def _words(text: str) -> str:
    """The text's words, casefolded, one space apart (punctuation and spacing aside)."""
    if text.isascii():  # a C-level translation: a fifth of the regular expression's time
        return " ".join(text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split())
    return _NOT_WORDS.sub(" ", text.casefold()).strip()


DUPLICATES_AT_ONCE = 65_536
"""Rows `_duplicates` reads at a time (their texts in memory together)."""


def _duplicates(state: State) -> list[tuple[str, str]]:
    """Notes of one agent in one scope with the same words: each merges into its newest (a
    note of another namespace, user or session is another's, however alike). Texts are
    told apart by a 128-bit digest, so that a million notes need not be held; the same text
    again has its words read once."""
    newest: dict[tuple[str, Scope, bytes], str] = {}
    words_of: dict[bytes, bytes] = {}
    merged: list[tuple[str, str]] = []
    alive = np.flatnonzero(state.alive.values)
    for end in range(len(alive), 0, -DUPLICATES_AT_ONCE):
        rows = alive[max(0, end - DUPLICATES_AT_ONCE) : end]
        for memory in reversed(state.rows.fixed(rows)):
            if memory.kind != "memory":
                continue
            text = _digest(memory.text)
            words = words_of.get(text)
            if words is None:
                words = words_of[text] = _digest(_words(memory.text.decode()).encode())
            kept = newest.setdefault((memory.agent, memory.scope, words), memory.id)
            if kept != memory.id:
                merged.append((memory.id, kept))
    return sorted(merged)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _effect(
    state: State,
    counts: scipy.sparse.csr_array,
    taught: dict[tuple[int, int], float | None],
    between: dict[tuple[int, int], float | None],
    decision: Decision,
) -> Effect:
    before_keys, before = _upper_entries(state.counts.matrix())
    after_keys, after = _upper_entries(counts)
    at = np.minimum(np.searchsorted(after_keys, before_keys), max(0, len(after_keys) - 1))
    found = after_keys[at] == before_keys if len(after_keys) else np.zeros(len(before_keys), bool)
    after_of_before = np.where(found, after[at] if len(after) else 0, 0)
    taught_removed = 0.0
    for (i, j), value in taught.items():
        taught_removed += abs(state.learned[i][j]) - (abs(value) if value is not None else 0.0)
    for link, value in between.items():
        taught_removed += abs(state.memory_links[link][0]) - abs(value or 0.0)
    changed = [*taught.values(), *between.values()]
    return Effect(
        concepts_pruned=len(decision.pruned),
        links_decayed=int(((after_of_before < before) & (after_of_before > 0)).sum()),
        links_dropped=int((after_of_before == 0).sum()),
        taught_decayed=sum(1 for v in changed if v is not None),
        taught_dropped=sum(1 for v in changed if v is None),
        memories_merged=len(decision.merged),
        written_removed=int(before.sum() - after.sum()),
        taught_removed=round(taught_removed, 6),
    )


def _upper_entries(matrix: scipy.sparse.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """Keys (row * size + column, ascending) and counts of the links, each pair once."""
    upper = scipy.sparse.triu(matrix, k=1).tocsr()
    upper.sort_indices()
    rows = np.repeat(np.arange(upper.shape[0], dtype=np.int64), np.diff(upper.indptr))
    return rows * upper.shape[0] + upper.indices, np.asarray(upper.data, dtype=np.int64)
