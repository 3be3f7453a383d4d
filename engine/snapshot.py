"""State <-> bytes, and the content hash that proves two states are the same.

The encoding is canonical (sorted keys, links in index order, memories in log
order), so equal states always give equal bytes and equal hashes.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

import orjson

from .errors import CorruptSnapshot
from .position import parse_position
from .state import Memory, State, pair

SNAPSHOT_FORMAT = 1
"""Bumped when the byte layout changes; older snapshots are then rebuilt from the log."""


def encode_state(state: State) -> bytes:
    """Canonical, uncompressed bytes of `state` (the input of the content hash)."""
    document = {
        "format": SNAPSHOT_FORMAT,
        "position": state.position,
        "concepts": state.concepts,
        "memories": [_memory_row(state, m) for m in _in_log_order(state)],
        "counts": _upper_triangle(state.counts),
        "learned": _upper_triangle(state.learned),
        "changed": sorted([i, j, p] for (i, j), p in state.changed_at.items()),
    }
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


def dump_state(state: State) -> bytes:
    return zlib.compress(encode_state(state), 1)


def load_state(blob: bytes) -> State:
    try:
        document = orjson.loads(zlib.decompress(blob))
        if document["format"] != SNAPSHOT_FORMAT:
            raise CorruptSnapshot(f"snapshot format {document['format']} is not {SNAPSHOT_FORMAT}")
        return _state_from(document)
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def content_hash(state: State) -> str:
    return hashlib.sha256(encode_state(state)).hexdigest()


def _in_log_order(state: State) -> list[Memory]:
    return sorted(state.memories.values(), key=lambda m: parse_position(m.id))


def _memory_row(state: State, m: Memory) -> list[Any]:
    indices = [state.concept_index[c] for c in m.concepts]
    return [m.id, m.text, indices, m.agent, m.user, m.ts, m.importance, m.valence]


def _upper_triangle(rows: dict[int, dict[int, Any]]) -> list[list[Any]]:
    return sorted([i, j, v] for i, row in rows.items() for j, v in row.items() if i < j)


def _state_from(document: dict[str, Any]) -> State:
    state = State()
    state.position = document["position"]
    for concept in document["concepts"]:
        state.intern(concept)
    for mid, text, indices, agent, user, ts, importance, valence in document["memories"]:
        concepts = tuple(state.concepts[i] for i in indices)
        state.memories[mid] = Memory(mid, text, concepts, agent, ts, importance, user, valence)
        for index in indices:
            state.postings.setdefault(index, []).append(mid)
    for i, j, count in document["counts"]:
        for a, b in ((i, j), (j, i)):
            state.counts.setdefault(a, {})[b] = count
    for i, j, value in document["learned"]:
        for a, b in ((i, j), (j, i)):
            state.learned.setdefault(a, {})[b] = value
    state.changed_at = {pair(i, j): p for i, j, p in document["changed"]}
    return state
