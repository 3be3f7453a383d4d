"""Memories in a snapshot, a column per field: numbers as numpy arrays, each memory's
concept indices one after the other, repeated names (agents, users, ...) as a table and a
number per row. The tables are in order of first use in the rows encoded, so a state
encodes alike however it was built (folded, or loaded from a full or a delta snapshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from assocmem.engine.state.memory_rows import LoadedMemories
from assocmem.engine.state.packed_text import PackedText

if TYPE_CHECKING:
    from assocmem.engine.state.state import State

NAMED = ("agent", "user", "session", "namespace", "kind")
"""Fields kept as a table of names and a number per row (-1 for none)."""
ARRAYS = {
    "memory_text": "u1",
    "memory_text_lengths": "<i8",
    "memory_concepts": "<i4",
    "memory_lengths": "<i4",
    "memory_core": "<i4",
    "memory_matched": "<i4",
    "memory_ts": "<f8",
    "memory_importance": "<i1",
    "memory_valence": "<f8",
    "memory_accesses": "<i4",
} | {f"memory_{field}": "<i4" for field in NAMED}
"""The numpy sections of a snapshot that hold memories, and their types."""


def encode_memories(state: State, start: int, end: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows `start` to `end` as header fields (JSON) and arrays, taken from their blocks'
    columns, without a Memory object."""
    state.flush()  # staged notes are not rows yet
    rows = state.rows
    parts: list[dict[str, Any]] = []
    for block in rows.blocks():
        lo, hi = max(start, block.start), min(end, block.start + len(block))
        if lo < hi:
            parts.append(_block_part(block, lo - block.start, hi - block.start, start))
    header: dict[str, Any] = {
        "ids": list(chain.from_iterable(p["ids"] for p in parts)),
        "meta": list(chain.from_iterable(p["meta"] for p in parts)),
        "superseded_by": [
            [r - start, rows.superseded_by(r)]
            for r in (np.flatnonzero(~state.alive.values[start:end]) + start).tolist()
        ],
    }
    arrays: dict[str, Any] = {
        "memory_text": np.frombuffer(b"".join(p["text"] for p in parts), dtype=np.uint8)
    }
    joined = ("text_lengths", "concepts", "lengths", "core", "matched")
    for name in (f"memory_{field}" for field in joined):
        arrays[name] = _joined([p[name] for p in parts], ARRAYS[name])
    for field in NAMED:
        arrays[f"memory_{field}"], header[f"{field}s"] = _merged_tables([p[field] for p in parts])
    for column in ("ts", "importance", "valence", "accesses"):  # what changes: the columns
        arrays[f"memory_{column}"] = getattr(state, column).values[start:end]
    return header, arrays


def decode_memories(
    header: dict[str, Any], arrays: dict[str, np.ndarray], start: int
) -> tuple[LoadedMemories, dict[str, np.ndarray]]:
    """The rows `encode_memories` wrote, from row `start`, and their numbers (ts,
    importance, valence, accesses) for the state's columns."""
    lengths = arrays["memory_lengths"]
    count = len(header["ids"])
    flat = ("memory_concepts", "memory_text")
    if any(len(arrays[name]) != count for name in ARRAYS if name not in flat):
        raise ValueError("memory columns of different lengths")
    offsets, text_offsets = offsets_of(lengths), offsets_of(arrays["memory_text_lengths"])
    if offsets[-1] != len(arrays["memory_concepts"]):
        raise ValueError("memory concepts do not add up to their lengths")
    if text_offsets[-1] != len(arrays["memory_text"]):
        raise ValueError("memory texts do not add up to their lengths")
    block = LoadedMemories(
        start=start,
        ids=header["ids"],
        text_bytes=_text_of(arrays["memory_text"]),
        text_offsets=text_offsets,
        concepts=arrays["memory_concepts"],
        offsets=offsets,
        core=arrays["memory_core"],
        matched=arrays["memory_matched"],
        agent=arrays["memory_agent"],
        agents=header["agents"],
        user=arrays["memory_user"],
        users=header["users"],
        session=arrays["memory_session"],
        sessions=header["sessions"],
        namespace=arrays["memory_namespace"],
        namespaces=header["namespaces"],
        kind=arrays["memory_kind"],
        kinds=header["kinds"],
        meta={row: meta for row, meta in header["meta"]},
        superseded_by={row: by for row, by in header["superseded_by"]},
    )
    numbers = {
        name: arrays[f"memory_{name}"] for name in ("ts", "importance", "valence", "accesses")
    }
    return block, numbers


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """Where each run of `lengths` starts, and where the last ends (int64)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _text_of(column: np.ndarray | PackedText) -> memoryview | PackedText:
    """The texts as a block holds them: a view of the snapshot's bytes, or still packed."""
    return column if isinstance(column, PackedText) else memoryview(column)


def _joinable(text: memoryview | PackedText) -> memoryview | bytes:
    return bytes(text) if isinstance(text, PackedText) else text


def _block_part(block: LoadedMemories, lo: int, hi: int, start: int) -> dict[str, Any]:
    """Local rows `lo` to `hi` of a loaded block; `start`: the first row encoded."""
    first = block.start + lo - start
    return {
        "ids": block.ids[lo:hi],
        "text": block.text_bytes[block.text_offsets[lo] : block.text_offsets[hi]],
        "memory_text_lengths": np.diff(block.text_offsets[lo : hi + 1]),
        "meta": [[first + r - lo, m] for r, m in sorted(block.meta.items()) if lo <= r < hi],
        "memory_concepts": block.concepts[block.offsets[lo] : block.offsets[hi]],
        "memory_lengths": np.diff(block.offsets[lo : hi + 1]),
        "memory_core": block.core[lo:hi],
        "memory_matched": block.matched[lo:hi],
        "agent": (block.agent[lo:hi], block.agents),
        "user": (block.user[lo:hi], block.users),
        "session": (block.session[lo:hi], block.sessions),
        "namespace": (block.namespace[lo:hi], block.namespaces),
        "kind": (block.kind[lo:hi], block.kinds),
    }


def _joined(parts: list[Any], dtype: str) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.concatenate([np.asarray(p, dtype=dtype) for p in parts])


def coded(names: Sequence[str | None]) -> tuple[np.ndarray, list[str]]:
    """A number per name into a table of the names in order of first use (-1: None), in
    passes in C: a block of notes has a few agents, kinds and users among thousands."""
    table = [name for name in dict.fromkeys(names) if name is not None]
    numbers: dict[str | None, int] = {name: n for n, name in enumerate(table)}
    numbers[None] = -1
    if len(table) == 1 and None not in names:
        return np.zeros(len(names), dtype=np.int32), table
    codes = np.fromiter(map(numbers.__getitem__, names), dtype=np.int32, count=len(names))
    return codes, table


def _merged_tables(parts: list[tuple[np.ndarray, list[str]]]) -> tuple[np.ndarray, list[str]]:
    """Codes into one table of the names in order of first use, from each part's own."""
    table: dict[str, int] = {}
    merged = []
    for codes, names in parts:
        codes = np.asarray(codes, dtype=np.int32)
        used, first = np.unique(codes[codes >= 0], return_index=True)
        remap = np.full(len(names) + 1, -1, dtype=np.int32)  # the last one: code -1
        for code in used[np.argsort(first)].tolist():
            remap[code] = table.setdefault(names[code], len(table))
        merged.append(remap[codes])
    return _joined(merged, "<i4"), list(table)


def joined_blocks(blocks: list[LoadedMemories]) -> LoadedMemories:
    """The rows of adjacent blocks (each starts where the one before ends) as one block."""
    shifts = [0]
    for block in blocks:
        assert block.start == blocks[0].start + shifts[-1], "the blocks are adjacent"
        shifts.append(shifts[-1] + len(block))

    def names(field: str) -> tuple[np.ndarray, list[str]]:
        """The codes of all into one table: the first's, then each next one's other names
        (a block's table need not be in order of use: an encode orders those it writes)."""
        table: list[str] = list(getattr(blocks[0], f"{field}s"))
        numbers = {name: n for n, name in enumerate(table)}
        parts = []
        for block in blocks:
            codes, more = getattr(block, field), getattr(block, f"{field}s")
            if more == table:
                parts.append(codes)
                continue
            for name in more:
                if name not in numbers:
                    numbers[name] = len(table)
                    table.append(name)
            remap = np.array([numbers[name] for name in more] + [-1], dtype=np.int32)
            parts.append(remap[codes])  # code -1 (none): the last
        return np.concatenate(parts), table

    return LoadedMemories(
        start=blocks[0].start,
        ids=list(chain.from_iterable(block.ids for block in blocks)),
        text_bytes=memoryview(b"".join([_joinable(block.text_bytes) for block in blocks])),
        text_offsets=_rebased([block.text_offsets for block in blocks]),
        concepts=np.concatenate([block.concepts for block in blocks]),
        offsets=_rebased([block.offsets for block in blocks]),
        core=np.concatenate([block.core for block in blocks]),
        matched=np.concatenate([block.matched for block in blocks]),
        **named_fields({field: names(field) for field in NAMED}),
        meta={
            shift + row: meta
            for block, shift in zip(blocks, shifts, strict=False)
            for row, meta in block.meta.items()
        },
        superseded_by={
            shift + row: by
            for block, shift in zip(blocks, shifts, strict=False)
            for row, by in block.superseded_by.items()
        },
    )


def named_fields(by_field: dict[str, tuple[np.ndarray, list[str]]]) -> dict[str, Any]:
    """LoadedMemories' fields of the NAMED fields: per field its codes, and its table (the
    field's name with an s)."""
    fields: dict[str, Any] = {}
    for field, (codes, table) in by_field.items():
        fields[field], fields[f"{field}s"] = codes, table
    return fields


def _rebased(runs: list[np.ndarray]) -> np.ndarray:
    """Offsets of runs one after another: each one's moved past the end of those before."""
    ends = np.cumsum([run[-1] for run in runs])
    return np.concatenate(
        [runs[0], *(run[1:] + end for run, end in zip(runs[1:], ends, strict=False))]
    )
