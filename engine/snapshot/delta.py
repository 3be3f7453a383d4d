"""Delta snapshots: a state as the difference from the full snapshot it was last published
as (its base), so publishing costs what changed, not the whole state.

Deltas come in two sizes: a delta of the full snapshot (`State.base`), and small deltas of
the latest such delta (`State.level`), so that a publish every thousand events at a
million memories does not write a quarter of the state each time. A small delta loads
on its delta, that on the full snapshot: never more than two apply.

A delta holds the concepts, memories and link events (`State.link_events`) added since
the base, the base's memories and concepts that changed (tracked by `State.base` as the
fold changes them), the counts matrix minus the base's, and what is small whole (taught
links and the scopes' shares of them, scoped document units, what consolidation took off).
Base + delta decodes to the same state as a full snapshot of it: same content hash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.position import Position, Positions
from assocmem.engine.snapshot.codec import (
    SNAPSHOT_FORMAT,
    compress_snapshot,
    full_state,
    learned_columns,
    load_learned,
    load_memory_parts,
    load_scoped_parts,
    load_state,
    memory_parts,
    pieces,
    scoped_parts,
    unpack,
)
from assocmem.engine.state.cooccurrence import grown, grown_sum
from assocmem.engine.state.memory_columns import decode_memories, encode_memories
from assocmem.engine.state.state import Base, State

DEPTH = 2
"""Deltas that load on one another at most (a small delta on a delta on a full snapshot)."""


def delta_size(state: State, base: Base | None = None) -> int:
    """How much a delta of `state` from `base` (default: its full snapshot) would hold:
    rows and concepts added or touched since. The publisher compares it with the base's size."""
    base = base or state.base
    if base is None:
        return len(state.rows) + len(state.concepts)
    return (
        len(state.rows)
        - base.rows
        + len(base.touched_rows)
        + len(state.concepts)
        - base.concepts
        + len(base.touched_concepts)
    )


def encode_delta(state: State, base: Base | None = None) -> bytes:
    """The compressed delta of `state` from `base`: `state.base` (its full snapshot, the
    default) or `state.level` (the delta of it last published)."""
    base = base or state.base
    if base is None:
        raise ValueError("the state has no base: publish a full snapshot first")
    concepts = sorted(base.touched_concepts) + list(range(base.concepts, len(state.concepts)))
    header = (
        {
            "format": SNAPSHOT_FORMAT,
            "base": str(base.position),
            "base_rows": base.rows,
            "base_concepts": base.concepts,
            "position": str(state.position),
            "documents": state.documents,
            "consolidated_at": state.consolidated_at,
            "concepts": state.concepts[base.concepts :],
            "surfaces": [[i, list(state.surfaces[i].items())] for i in concepts],
            "labels": [[i, state.labels[i]] for i in concepts],
            "changed": [
                [
                    r,
                    int(state.importance.values[r]),
                    float(state.valence.values[r]),
                    int(state.accesses.values[r]),
                    state.rows.superseded_by(r),
                ]
                for r in sorted(base.touched_rows)
            ],
            "link_events": state.link_events.flat(base.link_events),
        }
        | scoped_parts(state)
        | memory_parts(state)
    )
    header["memories"], arrays = encode_memories(state, base.rows, len(state.rows))
    size = len(state.concepts)
    counts = (state.counts.matrix() - grown(base.counts, size)).tocsr()
    counts.eliminate_zeros()
    counts.sort_indices()
    return compress_snapshot(
        pieces(
            header,
            {"counts": counts, "reduction": state.counts.reduction()},
            arrays | learned_columns(state),
        )
    )


def base_of(blob: bytes | memoryview) -> Position | None:
    """The base a snapshot is a delta of; None for a full snapshot."""
    header, _, _ = unpack(blob)
    return Position.parse(header["base"]) if header.get("base") else None


Decoded = tuple[Position, State]
"""The state of the full snapshot at a position (`load_full`), decoded ahead of need."""


def load_full(blob: bytes) -> State:
    """The state of a full snapshot, marked as the base of deltas as `load_snapshot` marks
    it (CorruptSnapshot for a delta)."""
    state = load_state(blob)
    state.mark_base()
    return state


def load_snapshot(
    blob: bytes | memoryview,
    fetch: Callable[[Position], bytes | memoryview | None],
    depth: int = DEPTH,
    known: Decoded | None = None,
) -> State:
    """The state a snapshot holds: a full one alone, a delta applied to its base's state
    (`fetch` gets the base's bytes by position). Either way the state's bases are set
    (`State.base`, and `State.level` for a delta), so the next delta is taken from them.

    `known`: the full snapshot at a position, decoded already (the caller vouches that it
    is the one `fetch` would get): a delta on it takes its state instead of fetching and
    decoding it (and changes that state in place)."""
    header, matrices, columns = unpack(blob)
    if header.get("base") is None:
        state = full_state(header, matrices, columns)
        state.mark_base()
        return state
    if depth == 0:
        raise CorruptSnapshot(
            f"delta snapshot at {header['position']} is more than {DEPTH} deltas from a full one"
        )
    base = Position.parse(header["base"])
    if known is not None and known[0] == base:
        state = known[1]
    else:
        base_blob = fetch(base)
        if base_blob is None:
            raise CorruptSnapshot(
                f"delta snapshot at {header['position']} lost its base {header['base']}"
            )
        state = load_snapshot(base_blob, fetch, depth - 1, known)
    try:
        _apply(state, header, matrices, columns)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"delta snapshot cannot be applied: {exc}") from exc
    return state


def _apply(
    state: State,
    header: dict[str, Any],
    matrices: dict[str, scipy.sparse.csr_array],
    columns: dict[str, np.ndarray],
) -> None:
    base = _base_named(state, header)
    for concept in header["concepts"]:
        state.intern(concept)
    for index, surfaces in header["surfaces"]:
        state.surfaces[index] = dict(surfaces)
        state.touch_concept(index)
    for index, label in header["labels"]:
        state.set_label(index, label)
    state.load_memories(*decode_memories(header["memories"], columns, len(state.rows)))
    for r, importance, valence, accesses, superseded_by in header["changed"]:
        state.restore_row(r, importance, valence, accesses, superseded_by)
    size = len(state.concepts)
    state.counts.load(grown_sum(base.counts, matrices["counts"], size), matrices["reduction"])
    load_learned(state, columns)
    load_scoped_parts(state, header)
    load_memory_parts(state, header)
    state.position = Position.parse(header["position"])
    state.documents = header["documents"]
    state.consolidated_at = header["consolidated_at"]
    state.link_events.truncate(base.link_events)
    state.link_events.extend(Positions(header["link_events"]))
    if base is state.base:
        state.mark_level()


def _base_named(state: State, header: dict[str, Any]) -> Base:
    """The base of `state` a delta was taken from: its latest delta, or its full snapshot."""
    named = (header["base"], header["base_rows"], header["base_concepts"])
    for base in (state.level, state.base):
        if base is not None and (str(base.position), base.rows, base.concepts) == named:
            return base
    raise CorruptSnapshot(f"delta snapshot at {header['position']} is not of this base")
