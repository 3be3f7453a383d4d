"""State <-> bytes, and the content hash that proves two states are the same.

The encoding is canonical (memories in log order, counts as a CSR matrix with
sorted indices, learned links in index order), so equal states always give
equal bytes and equal hashes. Layout: a JSON header, then the counts matrix and what
consolidation took off it, each as three raw little-endian arrays, then the memories'
columns (engine/state/memory_columns.py) and the taught links' (LEARNED); numpy reads them
back without parsing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import zlib
from collections.abc import Iterable
from itertools import chain
from typing import Any

import numpy as np
import orjson
import scipy.sparse
import zstandard

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.position import Position, Positions
from assocmem.engine.snapshot.frames import compress_snapshot, decompress_snapshot
from assocmem.engine.state.cooccurrence import COUNT_DTYPE
from assocmem.engine.state.memory_columns import ARRAYS, decode_memories, encode_memories
from assocmem.engine.state.packed_text import PackedText
from assocmem.engine.state.postings import index_type
from assocmem.engine.state.state import State

SNAPSHOT_FORMAT = 9
"""Bumped when the byte layout changes, or what the fold makes of a log (9: taught links
between memories never below 0); older snapshots are then rebuilt from the log."""
_ARRAYS = (("indptr", "<i8"), ("indices", "<i4"), ("data", "<i4"))
_MATRICES = ("counts", "reduction")
LEARNED = {
    "learned_i": "<i4",
    "learned_j": "<i4",
    "learned_value": "<f8",
    "learned_ms": "<u8",
    "learned_seq": "<u8",
}
"""The taught links as columns, one entry per pair i < j, in index order, with the position
of their last change: as JSON lists with positions as strings, they were a large part of
every encode (a content hash, a snapshot) and of every load."""
COLUMNS = ARRAYS | LEARNED
"""The numpy sections after the matrices, in order."""
APART = ("memory_text", "memory_concepts")
"""The sections a snapshot may keep apart from it (`RowsApart`): most of its bytes."""


@dataclasses.dataclass(frozen=True, slots=True)
class RowsApart:
    """A snapshot whose memories' texts and concept lists are kept elsewhere: `rest` is the
    snapshot with those sections (APART) empty. Every snapshot of a log's epoch holds the same
    rows before its newest, so a store that keeps many keeps those once for all of them
    (workers/store/snapshot_rungs.py, engine/snapshot/rows_apart.py)."""

    rest: bytes | memoryview
    text: np.ndarray | PackedText
    concepts: np.ndarray


def encode_state(state: State) -> bytes:
    """Canonical, uncompressed bytes of `state` (the input of the content hash)."""
    return b"".join(state_pieces(state))


def state_pieces(state: State) -> list[memoryview]:
    """`encode_state`'s bytes in the pieces they are made of: hashed or compressed piece by
    piece, never joined: joining them cost a fifth of a content hash, on top of a copy of
    every array."""
    header = (
        {
            "format": SNAPSHOT_FORMAT,
            "position": str(state.position),
            "concepts": state.concepts,
            "surfaces": [[i, list(s.items())] for i, s in enumerate(state.surfaces) if s],
            "labels": [[i, w] for i, w in enumerate(state.labels) if w != state.concepts[i]],
            "documents": state.documents,
            "consolidated_at": state.consolidated_at,
            "link_events": state.link_events.flat(),
        }
        | scoped_parts(state)
        | memory_parts(state)
    )
    memories, arrays = encode_memories(state, 0, len(state.rows))
    header["memories"] = memories
    matrices = {"counts": state.counts.matrix(), "reduction": state.counts.reduction()}
    return pieces(header, matrices, arrays | learned_columns(state))


def scoped_parts(state: State) -> dict[str, Any]:
    """What scopes other than the common one taught and ingested (engine/state/scoped_links.py),
    in the header only when there is any: a state without scopes encodes as before."""
    parts: dict[str, Any] = {}
    if state.private_learned:
        parts["private_learned"] = sorted(
            [i, j, *_scope_key(scope), value]
            for (i, j), shares in state.private_learned.items()
            for scope, value in shares.items()
        )
    if state.private_units:
        parts["private_units"] = [[*scope, units] for scope, units in state.private_units]
    return parts


def load_scoped_parts(state: State, header: dict[str, Any]) -> None:
    state.private_learned = {}
    for i, j, namespace, user, session, value in header.get("private_learned", []):
        scope = (namespace or None, user or None, session or None)
        state.private_learned.setdefault((i, j), {})[scope] = value
    state.private_units = [
        ((namespace, user, session), units)
        for namespace, user, session, units in header.get("private_units", [])
    ]


def memory_parts(state: State) -> dict[str, Any]:
    """The taught links between stream neighbours and the deleted memories, in the header
    only when there are any: a state without them encodes as before."""
    parts: dict[str, Any] = {}
    if state.memory_links:
        parts["memory_links"] = [
            [anchor, row, value, str(at)]
            for (anchor, row), (value, at) in sorted(state.memory_links.items())
        ]
    if state.deleted:
        parts["deleted"] = [[row, str(at)] for row, at in sorted(state.deleted.items())]
    return parts


def load_memory_parts(state: State, header: dict[str, Any]) -> None:
    """`memory_parts` back, after the memories and their changed rows are loaded."""
    state.memory_links = {
        (anchor, row): (value, Position.parse(at))
        for anchor, row, value, at in header.get("memory_links", [])
    }
    state.deleted = {row: Position.parse(at) for row, at in header.get("deleted", [])}
    for row in state.deleted:
        state.alive[row] = False


def _scope_key(scope: tuple[str | None, ...]) -> list[str]:
    """A scope's parts, "" for none ("" is no valid scope name): sortable, and canonical."""
    return [part or "" for part in scope]


def learned_columns(state: State) -> dict[str, np.ndarray]:
    """The taught links as LEARNED's columns (`learned_at` names each pair once, i < j)."""
    at, learned = state.learned_at, state.learned
    size = 2 * len(at)
    pairs = np.fromiter(chain.from_iterable(at), np.int64, size).reshape(-1, 2)
    positions = np.fromiter(chain.from_iterable(at.values()), np.uint64, size).reshape(-1, 2)
    values = np.array([learned[i][j] for i, j in at], dtype=np.float64)
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return {
        "learned_i": pairs[order, 0].astype(np.int32),
        "learned_j": pairs[order, 1].astype(np.int32),
        "learned_value": values[order],
        "learned_ms": positions[order, 0],
        "learned_seq": positions[order, 1],
    }


def load_learned(state: State, columns: dict[str, np.ndarray]) -> None:
    """Set the state's taught links to those of LEARNED's `columns` (and no others)."""
    state.load_learned(
        columns["learned_i"].tolist(),
        columns["learned_j"].tolist(),
        columns["learned_value"].tolist(),
        list(map(Position, columns["learned_ms"].tolist(), columns["learned_seq"].tolist())),
    )


def pieces(
    header: dict[str, Any],
    matrices: dict[str, scipy.sparse.csr_array],
    arrays: dict[str, np.ndarray],
) -> list[memoryview]:
    """A JSON header, then each matrix as three raw little-endian arrays, then the memory
    columns and the taught links' (`arrays`, in the order of COLUMNS); each section after its
    length."""
    sections = [memoryview(orjson.dumps(header, option=orjson.OPT_SORT_KEYS))]
    sections += [
        _raw(getattr(matrices[matrix], name), dtype)
        for matrix in _MATRICES
        for name, dtype in _ARRAYS
    ]
    sections += [_raw(arrays[name], dtype) for name, dtype in COLUMNS.items()]
    return framed(sections)


def framed(sections: Iterable[memoryview]) -> list[memoryview]:
    """A snapshot's bytes, in pieces, from its sections (`named_sections`' values): each
    section after its length."""
    made: list[memoryview] = []
    for section in sections:
        made += [memoryview(struct.pack("<Q", section.nbytes)), section]
    return made


def named_sections(blob: bytes | memoryview) -> dict[str, memoryview]:
    """A snapshot's sections by name, in order ("header", "counts.indptr", ... then COLUMNS),
    as views of its bytes, not decoded."""
    names = ["header", *(f"{m}.{name}" for m in _MATRICES for name, _ in _ARRAYS), *COLUMNS]
    try:
        return dict(zip(names, _sections(decompress_snapshot(blob)), strict=True))
    except (zlib.error, zstandard.ZstdError, struct.error) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def _raw(values: Any, dtype: str) -> memoryview:
    """The values' bytes as `dtype`: the array's own when it is one already, not a copy."""
    return memoryview(np.ascontiguousarray(values, dtype=dtype)).cast("B")


def unpack(
    blob: bytes | memoryview | RowsApart,
) -> tuple[dict[str, Any], dict[str, scipy.sparse.csr_array], dict[str, np.ndarray]]:
    """The header, matrices and memory columns of a snapshot (full or delta), compressed or
    unpacked (engine/snapshot/frames.py), or with its rows' texts and concepts apart."""
    if isinstance(blob, RowsApart):
        header, matrices, columns = unpack(blob.rest)
        if any(len(columns[name]) for name in APART):
            raise CorruptSnapshot(f"snapshot at {header['position']} holds the rows kept apart")
        return (
            header,
            matrices,
            columns | {"memory_text": blob.text, "memory_concepts": blob.concepts},
        )
    try:
        raw = decompress_snapshot(blob)
        sections = _sections(raw)
        header = orjson.loads(sections[0])
        if header["format"] != SNAPSHOT_FORMAT:
            raise CorruptSnapshot(f"snapshot format {header['format']} is not {SNAPSHOT_FORMAT}")
        layout = [(m, name, dtype) for m in _MATRICES for name, dtype in _ARRAYS]
        # Views of `raw`, not copies: at a million memories, copying them was a second
        # of a load, and as much memory again touched.
        arrays = {
            (m, name): np.frombuffer(section, dtype=dtype)
            for (m, name, dtype), section in zip(layout, sections[1 : 1 + len(layout)], strict=True)
        }
        columns = {
            name: np.frombuffer(section, dtype=dtype)
            for (name, dtype), section in zip(
                COLUMNS.items(), sections[1 + len(layout) :], strict=True
            )
        }
        matrices = {}
        for m in _MATRICES:
            indptr, indices = arrays[(m, "indptr")], arrays[(m, "indices")]
            size = len(indptr) - 1
            # The index pointers as 32 bits while they fit, like the stored indices: given
            # 64-bit pointers, scipy copied the indices to 64 bits, and the counts copied
            # them back to 32 bits (4.1 million at 50,000 commit messages).
            matrices[m] = scipy.sparse.csr_array(
                (
                    arrays[(m, "data")].astype(COUNT_DTYPE, copy=False),
                    indices,
                    indptr.astype(index_type(len(indices)), copy=False),
                ),
                shape=(size, size),
            )
        return header, matrices, columns
    except (zlib.error, zstandard.ZstdError, orjson.JSONDecodeError, struct.error) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def dump_state(state: State) -> bytes:
    return compress_snapshot(state_pieces(state))


def load_state(blob: bytes | memoryview | RowsApart) -> State:
    """The state a full snapshot holds (a delta needs its base: engine/snapshot/delta.py)."""
    return full_state(*unpack(blob))


def full_state(
    header: dict[str, Any],
    matrices: dict[str, scipy.sparse.csr_array],
    columns: dict[str, np.ndarray],
) -> State:
    """The state of a full snapshot, from what `unpack` read of it."""
    if header.get("base") is not None:
        raise CorruptSnapshot(f"snapshot at {header['position']} is a delta of {header['base']}")
    try:
        return _state_from(header, matrices, columns)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def content_hash(state: State) -> str:
    """SHA-256 of `encode_state`'s bytes."""
    digest = hashlib.sha256()
    for piece in state_pieces(state):
        digest.update(piece)
    return digest.hexdigest()


def _sections(raw: np.ndarray) -> list[memoryview]:
    sections, at, view = [], 0, memoryview(raw)
    while at < len(raw):
        (size,) = struct.unpack_from("<Q", raw, at)
        at += 8
        if at + size > len(raw):
            raise CorruptSnapshot("snapshot is truncated")
        sections.append(view[at : at + size])
        at += size
    expected = 1 + len(_ARRAYS) * len(_MATRICES) + len(COLUMNS)
    if len(sections) != expected:
        raise CorruptSnapshot(f"snapshot has {len(sections)} sections: expected {expected}")
    return sections


def _state_from(
    header: dict[str, Any],
    matrices: dict[str, scipy.sparse.csr_array],
    columns: dict[str, np.ndarray],
) -> State:
    state = State()
    state.position = Position.parse(header["position"])
    state.documents = header["documents"]
    state.consolidated_at = header["consolidated_at"]
    state.link_events = Positions(header["link_events"])
    state.intern_all(header["concepts"])
    for index, surfaces in header["surfaces"]:
        state.surfaces[index] = dict(surfaces)
    for index, label in header["labels"]:
        state.set_label(index, label)
    state.load_memories(*decode_memories(header["memories"], columns, 0))
    state.counts.load(matrices["counts"], matrices["reduction"])
    load_learned(state, columns)
    load_scoped_parts(state, header)
    load_memory_parts(state, header)
    return state
