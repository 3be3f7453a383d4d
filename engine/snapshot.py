"""State <-> bytes, and the content hash that proves two states are the same.

The encoding is canonical (memories in log order, counts as a CSR matrix with
sorted indices, learned links in index order), so equal states always give
equal bytes and equal hashes. Layout: a JSON header, then the counts matrix and what
consolidation took off it, each as three raw little-endian arrays; numpy reads them back
without parsing.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from typing import Any

import numpy as np
import orjson
import scipy.sparse
import zstandard

from .cooccurrence import COUNT_DTYPE
from .errors import CorruptSnapshot
from .position import Position
from .state import Memory, State

SNAPSHOT_FORMAT = 5
"""Bumped when the byte layout changes; older snapshots are then rebuilt from the log."""
_ARRAYS = (("indptr", "<i8"), ("indices", "<i4"), ("data", "<i4"))
_MATRICES = ("counts", "reduction")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def encode_state(state: State) -> bytes:
    """Canonical, uncompressed bytes of `state` (the input of the content hash)."""
    header = {
        "format": SNAPSHOT_FORMAT,
        "position": str(state.position),
        "concepts": state.concepts,
        "surfaces": [[i, list(s.items())] for i, s in enumerate(state.surfaces) if s],
        "labels": [[i, w] for i, w in enumerate(state.labels) if w != state.concepts[i]],
        "documents": state.documents,
        "consolidated_at": state.consolidated_at,
        "memories": [memory_row(state, m) for m in state.rows],
        "learned": learned_rows(state),
    } | scoped_parts(state)
    return pack(header, {"counts": state.counts.matrix(), "reduction": state.counts.reduction()})


def scoped_parts(state: State) -> dict[str, Any]:
    """What scopes other than the common one taught and ingested (engine/scoped_links.py),
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


def _scope_key(scope: tuple[str | None, ...]) -> list[str]:
    """A scope's parts, "" for none ("" is no valid scope name): sortable, and canonical."""
    return [part or "" for part in scope]


def learned_rows(state: State) -> list[list[Any]]:
    return sorted(
        [i, j, v, str(state.learned_at[(i, j)])]
        for i, row in state.learned.items()
        for j, v in row.items()
        if i < j
    )


def pack(header: dict[str, Any], matrices: dict[str, scipy.sparse.csr_array]) -> bytes:
    """A JSON header, then each matrix as three raw little-endian arrays."""
    head = orjson.dumps(header, option=orjson.OPT_SORT_KEYS)
    parts = [struct.pack("<Q", len(head)), head]
    for matrix in _MATRICES:
        for name, dtype in _ARRAYS:
            raw = np.ascontiguousarray(getattr(matrices[matrix], name), dtype=dtype).tobytes()
            parts += [struct.pack("<Q", len(raw)), raw]
    return b"".join(parts)


def unpack(blob: bytes) -> tuple[dict[str, Any], dict[str, scipy.sparse.csr_array]]:
    """The header and matrices of a compressed snapshot (full or delta)."""
    try:
        raw = decompress_snapshot(blob)
        sections = _sections(raw)
        header = orjson.loads(sections[0])
        if header["format"] != SNAPSHOT_FORMAT:
            raise CorruptSnapshot(f"snapshot format {header['format']} is not {SNAPSHOT_FORMAT}")
        layout = [(m, name, dtype) for m in _MATRICES for name, dtype in _ARRAYS]
        arrays = {
            (m, name): np.frombuffer(section, dtype=dtype).copy()
            for (m, name, dtype), section in zip(layout, sections[1:], strict=True)
        }
        matrices = {}
        for m in _MATRICES:
            indptr = arrays[(m, "indptr")]
            size = len(indptr) - 1
            matrices[m] = scipy.sparse.csr_array(
                (
                    arrays[(m, "data")].astype(COUNT_DTYPE, copy=False),
                    arrays[(m, "indices")],
                    indptr,
                ),
                shape=(size, size),
            )
        return header, matrices
    except (zlib.error, zstandard.ZstdError, orjson.JSONDecodeError, struct.error) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def dump_state(state: State) -> bytes:
    return compress_snapshot(encode_state(state))


def compress_snapshot(raw: bytes) -> bytes:
    """zstd at level 1: a third of zlib's time at its fastest, for the same size (a
    compressor per call: one is not to be shared by threads)."""
    return zstandard.ZstdCompressor(level=1).compress(raw)


def decompress_snapshot(blob: bytes) -> bytes:
    """A snapshot's bytes; zlib-compressed ones (before zstd) are read too."""
    if blob[:4] == _ZSTD_MAGIC:
        return zstandard.ZstdDecompressor().decompress(blob)
    return zlib.decompress(blob)


def load_state(blob: bytes) -> State:
    """The state a full snapshot holds (a delta needs its base: engine/snapshot_delta.py)."""
    header, matrices = unpack(blob)
    if header.get("base") is not None:
        raise CorruptSnapshot(f"snapshot at {header['position']} is a delta of {header['base']}")
    try:
        return _state_from(header, matrices)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc


def content_hash(state: State) -> str:
    return hashlib.sha256(encode_state(state)).hexdigest()


def _sections(raw: bytes) -> list[bytes]:
    sections, at = [], 0
    while at < len(raw):
        (size,) = struct.unpack_from("<Q", raw, at)
        at += 8
        if at + size > len(raw):
            raise CorruptSnapshot("snapshot is truncated")
        sections.append(raw[at : at + size])
        at += size
    expected = 1 + len(_ARRAYS) * len(_MATRICES)
    if len(sections) != expected:
        raise CorruptSnapshot(f"snapshot has {len(sections)} sections: expected {expected}")
    return sections


def memory_row(state: State, m: Memory) -> list[Any]:
    indices = list(map(state.concept_index.__getitem__, m.concepts))
    return [
        m.id,
        m.text,
        indices,
        m.core,
        m.matched,
        m.agent,
        m.user,
        m.ts,
        m.importance,
        m.valence,
        m.accesses,
        m.superseded_by,
        m.kind,
        m.meta,
        m.session,
        m.namespace,
    ]


def _state_from(header: dict[str, Any], matrices: dict[str, scipy.sparse.csr_array]) -> State:
    state = State()
    state.position = Position.parse(header["position"])
    state.documents = header["documents"]
    state.consolidated_at = header["consolidated_at"]
    state.intern_all(header["concepts"])
    for index, surfaces in header["surfaces"]:
        state.surfaces[index] = dict(surfaces)
    for index, label in header["labels"]:
        state.set_label(index, label)
    rows = header["memories"]
    state.add_memories([memory_from(state, row) for row in rows], [row[2] for row in rows])
    state.counts.load(matrices["counts"], matrices["reduction"])
    for i, j, value, position in header["learned"]:
        state.set_learned(i, j, value, Position.parse(position))
    load_scoped_parts(state, header)
    return state


def memory_from(state: State, row: list[Any]) -> Memory:
    """The memory a `memory_row` describes, its concepts named from the state's table."""
    mid, text, indices, core, matched, agent, user, ts, importance, valence = row[:10]
    accesses, superseded_by, kind, meta = row[10:14]
    session, namespace = row[14:16] if len(row) > 14 else (None, None)  # rows before scopes
    concepts = tuple(map(state.concepts.__getitem__, indices))
    memory = Memory(
        mid, text, concepts, agent, ts, importance, user, valence, core, matched, kind, meta
    )
    memory.accesses, memory.superseded_by = accesses, superseded_by
    memory.session, memory.namespace = session, namespace
    return memory
