"""A long run of notes folded as one block of columns, without a Memory object each.

A replay, an `as_of` rebuild or a worker catching up folds runs of thousands of
memory.written events in a row. One at a time, each note became an object, was staged,
indexed at the next flush, and (in the workers) encoded again into a block of columns
when sealed. Here a run goes straight to the block a seal would have made of it, with
the same concepts, words, links and columns as the notes folded one at a time.
"""

from __future__ import annotations

from itertools import accumulate, chain, compress, repeat
from operator import is_
from typing import TYPE_CHECKING

import numpy as np

from .cooccurrence import LINK_WINDOW, LINKED_CONCEPTS
from .memory_columns import coded, offsets_of, sealed
from .memory_rows import LoadedMemories
from .staged_notes import count_surfaces

if TYPE_CHECKING:
    from .event import Event
    from .state import State


def joins_run(event: Event) -> bool:
    """Whether the event is a note the block can hold: one that supersedes none (that
    changes other memories, which is left to its handler)."""
    return event.type == "memory.written" and "supersedes" not in event.data


def add_notes(state: State, notes: list[Event]) -> bool:
    """Register, index and count `notes` (valid memory.written events that `joins_run`,
    in log order, after the state's position) as the next rows; False, with the state
    unchanged, if their texts cannot be kept as UTF-8 (they are then folded one at a time)."""
    try:
        texts = [note.data["text"].encode() for note in notes]
    except UnicodeEncodeError:  # a lone surrogate, from an event made in-process
        return False
    state.flush()
    rows = state.rows
    if len(rows) > rows.loaded_end():  # a block follows the last block: seal the objects between
        state.rows.seal(sealed(state, rows.loaded_end(), len(rows)))
    datas = [note.data for note in notes]
    lists = [data["concepts"] for data in datas]
    lengths = list(map(len, lists))
    flat = list(chain.from_iterable(lists))
    index = state.concept_index
    indices = list(map(index.get, flat))
    if None in indices:  # concepts new to the state, interned in the order they are used
        state.intern_all(list(dict.fromkeys(compress(flat, map(is_, indices, repeat(None))))))
        indices = list(map(index.__getitem__, flat))
    tiers = [data.get("tiers") or (n, n) for data, n in zip(datas, lengths, strict=True)]
    core, matched = [t[0] for t in tiers], [t[1] for t in tiers]
    add_window, known = state.counts.add_window, len(state.concepts)
    for end, length, linked in zip(accumulate(lengths), lengths, matched, strict=True):
        start = end - length
        # Supplement terms only verify a match; they make no links.
        add_window(indices[start : start + min(linked, LINKED_CONCEPTS)], LINK_WINDOW, known)
    surfaces = chain.from_iterable(
        map(data["labels"].get, concepts, concepts) if data.get("labels") else concepts
        for data, concepts in zip(datas, lists, strict=True)
    )
    count_surfaces(state, list(surfaces), indices)
    state.load_memories(
        _block(state, notes, texts, indices, lengths, core, matched), _numbers(notes)
    )
    return True


def _block(
    state: State,
    notes: list[Event],
    texts: list[bytes],
    indices: list[int],
    lengths: list[int],
    core: list[int],
    matched: list[int],
) -> LoadedMemories:
    agent, agents = coded([note.agent for note in notes])
    user, users = coded([note.user for note in notes])
    session, sessions = coded([note.session for note in notes])
    namespace, namespaces = coded([note.namespace for note in notes])
    return LoadedMemories(
        start=len(state.rows),
        ids=[str(note.position) for note in notes],
        text_bytes=memoryview(np.frombuffer(b"".join(texts), dtype=np.uint8)),
        text_offsets=offsets_of(np.fromiter(map(len, texts), np.int64, len(texts))),
        concepts=np.array(indices, dtype=np.int32),
        offsets=offsets_of(np.array(lengths, dtype=np.int64)),
        core=np.array(core, dtype=np.int32),
        matched=np.array(matched, dtype=np.int32),
        agent=agent,
        agents=agents,
        user=user,
        users=users,
        session=session,
        sessions=sessions,
        namespace=namespace,
        namespaces=namespaces,
        kind=np.zeros(len(notes), dtype=np.int32),
        kinds=["memory"],
        meta={},
        superseded_by={},
    )


def _numbers(notes: list[Event]) -> dict[str, np.ndarray]:
    """What the state's columns hold of each note: a new note was never read nor rated."""
    count = len(notes)
    return {
        "ts": np.fromiter((note.ts for note in notes), np.float64, count),
        "importance": np.fromiter((n.data["importance"] for n in notes), np.int8, count),
        "valence": np.zeros(count, dtype=np.float64),
        "accesses": np.zeros(count, dtype=np.int32),
    }
