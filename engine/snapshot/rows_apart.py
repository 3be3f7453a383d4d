"""A snapshot split in two: its memories' texts and concept lists, and the rest.

Within one epoch of a log the fold only appends rows, and never changes a row's text or
concepts once written (a delta carries none for its base's rows): every snapshot of the
epoch holds the same rows before its newest ones. Those two columns are most of a
snapshot's bytes (two thirds of them at a million commit messages), so a store that keeps
many snapshots (workers/store/snapshot_rungs.py) keeps them once, for all, and loads each
snapshot as a `RowsApart` of its rest and views of the rows it holds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import orjson

from assocmem.engine.errors import CorruptSnapshot
from assocmem.engine.snapshot.codec import APART, SNAPSHOT_FORMAT, framed, named_sections


@dataclasses.dataclass(frozen=True, slots=True)
class SplitRows:
    """A snapshot's rows `start` to `start + len(text_lengths)`, apart from the rest."""

    rest: list[memoryview]
    """The snapshot's bytes with its APART sections empty, in pieces, uncompressed."""
    start: int
    """Its first row: 0 for a full snapshot, its base's rows for a delta."""
    text: np.ndarray
    text_lengths: np.ndarray
    concepts: np.ndarray
    lengths: np.ndarray


def split_rows(blob: bytes | memoryview) -> SplitRows:
    """`blob` (compressed or unpacked) as its rows' texts and concepts, and the rest."""
    sections = named_sections(blob)
    try:
        header = orjson.loads(sections["header"])
        if header["format"] != SNAPSHOT_FORMAT:
            raise CorruptSnapshot(f"snapshot format {header['format']} is not {SNAPSHOT_FORMAT}")
        start = int(header["base_rows"]) if header.get("base") else 0
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptSnapshot(f"snapshot cannot be decoded: {exc}") from exc
    rest = framed(memoryview(b"") if name in APART else s for name, s in sections.items())
    return SplitRows(
        rest,
        start,
        np.frombuffer(sections["memory_text"], dtype="u1"),
        np.frombuffer(sections["memory_text_lengths"], dtype="<i8"),
        np.frombuffer(sections["memory_concepts"], dtype="<i4"),
        np.frombuffer(sections["memory_lengths"], dtype="<i4"),
    )
