"""Archive segments: a run of old log entries, compressed, immutable once written, listed in
a manifest in log order. Both stores keep them beside the log and read them as its head,
so a replay, an `as_of` read or an audit never knows whether an entry was archived.

Layout of a segment: zlib of, per entry, its position (two little-endian u64), the length
of the envelope (u32) and the envelope as stored.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import struct
import zlib
from collections.abc import Callable

import orjson

from assocmem.engine.position import MAX_PART, Position
from assocmem.workers.errors import StoreError
from assocmem.workers.store.ports import Entry

_HEAD = struct.Struct("<QQI")
LEVEL = 6
"""zlib level: segments are written once, at night, and read rarely."""


@dataclasses.dataclass(frozen=True, slots=True)
class Segment:
    first: Position
    last: Position
    count: int
    size: int
    """Bytes stored (compressed)."""
    raw_size: int
    """Bytes of the entries as the log held them."""
    sha256: str
    """Of the stored bytes: a segment read back is checked against it."""

    def record(self) -> bytes:
        return orjson.dumps(
            {**dataclasses.asdict(self), "first": str(self.first), "last": str(self.last)}
        )

    @classmethod
    def of(cls, record: bytes) -> Segment:
        data = orjson.loads(record)
        first, last = Position.parse(data.pop("first")), Position.parse(data.pop("last"))
        return cls(first=first, last=last, **data)


def encode_segment(entries: list[Entry]) -> tuple[Segment, bytes]:
    parts = []
    for position, raw in entries:
        parts += [_HEAD.pack(position.ms, position.seq, len(raw)), raw]
    raw_bytes = b"".join(parts)
    blob = zlib.compress(raw_bytes, LEVEL)
    segment = Segment(
        entries[0][0],
        entries[-1][0],
        len(entries),
        len(blob),
        sum(len(raw) for _, raw in entries),
        hashlib.sha256(blob).hexdigest(),
    )
    return segment, blob


def decode_segment(segment: Segment, blob: bytes | None) -> list[Entry]:
    if blob is None or hashlib.sha256(blob).hexdigest() != segment.sha256:
        raise StoreError(
            f"archive segment {segment.first}..{segment.last} is missing or damaged:"
            " expected the bytes its manifest record names"
        )
    raw = zlib.decompress(blob)
    entries: list[Entry] = []
    at = 0
    while at < len(raw):
        ms, seq, size = _HEAD.unpack_from(raw, at)
        at += _HEAD.size
        entries.append((Position(ms, seq), raw[at : at + size]))
        at += size
    return entries


def archived_entries(
    segments: list[Segment],
    load: Callable[[Segment], list[Entry]],
    after: Position,
    upto: Position | None,
    count: int,
) -> list[Entry]:
    """Up to `count` archived entries after `after`, up to `upto`, in log order."""
    found: list[Entry] = []
    start = bisect.bisect_right([s.last for s in segments], after)
    for segment in segments[start:]:
        if upto is not None and segment.first > upto:
            break
        entries = load(segment)
        at = bisect.bisect_right(entries, after, key=lambda entry: entry[0])
        for entry in entries[at:]:
            if (upto is not None and entry[0] > upto) or len(found) == count:
                return found
            found.append(entry)
    return found


def archived_holds(
    segments: list[Segment], load: Callable[[Segment], list[Entry]], position: Position
) -> bool:
    return bool(archived_at(segments, load, [position]))


def archived_at(
    segments: list[Segment], load: Callable[[Segment], list[Entry]], positions: list[Position]
) -> list[Entry]:
    """The archived entries at `positions` (ascending), in order; a position archived in no
    segment, or erased from one, has none."""
    lasts = [s.last for s in segments]
    found: list[Entry] = []
    for position in positions:
        at = bisect.bisect_left(lasts, position)
        if at == len(segments) or segments[at].first > position:
            continue
        entries = load(segments[at])
        index = bisect.bisect_left(entries, position, key=lambda entry: entry[0])
        if index < len(entries) and entries[index][0] == position:
            found.append(entries[index])
    return found


def next_position(position: Position) -> Position:
    """The first position after `position` (what XTRIM MINID keeps from)."""
    if position.seq < MAX_PART:
        return Position(position.ms, position.seq + 1)
    return Position(position.ms + 1, 0)
