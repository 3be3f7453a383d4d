"""Stream positions ("<ms>-<seq>", Redis entry ids) as one small ordered, hashable type.

A position is parsed once, where an entry is decoded or an append returns; from there
on it compares as a pair of integers and prints back as "<ms>-<seq>".
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from assocmem.engine.errors import quoted

_POSITION = re.compile(r"^(\d{1,20})-(\d{1,20})$")
MAX_PART = 2**64 - 1
"""Redis entry ids are two unsigned 64-bit numbers."""


class Position(NamedTuple):
    ms: int
    seq: int

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    @classmethod
    def parse(cls, text: str | bytes) -> Position:
        """The position `text` names; ValueError if it is not "<ms>-<seq>" within Redis's range."""
        raw = text.decode() if isinstance(text, bytes) else text
        match = _POSITION.match(raw)
        if match is None:
            raise ValueError(
                f"position {quoted(raw)} is malformed: expected '<ms>-<seq>', e.g. 1700000000000-0"
            )
        ms, seq = int(match.group(1)), int(match.group(2))
        if ms > MAX_PART or seq > MAX_PART:
            raise ValueError(f"position {quoted(raw)} is out of range: expected parts below 2^64")
        return cls(ms, seq)


ZERO = Position(0, 0)
"""The position before the first event."""


def just_before(position: Position) -> Position:
    """The greatest position below `position` (a read "after" it starts at `position`)."""
    if position.seq:
        return Position(position.ms, position.seq - 1)
    return Position(position.ms - 1, MAX_PART)


class Positions:
    """An append-only run of positions, kept as numbers: 16 bytes a position, where a list
    of `Position` tuples takes six times that in every process holding the state, and each
    snapshot's decoding made the tuples one by one."""

    __slots__ = ("_parts",)

    def __init__(self, flat: Iterable[int] = ()) -> None:
        """From `[ms, seq, ms, seq, ...]` (`flat()`); ValueError unless that is what it is."""
        try:
            self._parts = array("Q", flat)
        except OverflowError as exc:
            raise ValueError(f"positions out of range: {exc}") from exc
        if len(self._parts) % 2:
            raise ValueError(f"{len(self._parts)} numbers: expected a pair for each position")

    def append(self, position: Position) -> None:
        self._parts.extend(position)

    def __len__(self) -> int:
        return len(self._parts) // 2

    def __iter__(self) -> Iterator[Position]:
        return map(Position, self._parts[::2], self._parts[1::2])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Positions):
            return self._parts == other._parts
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Positions({[str(p) for p in self]})"

    def flat(self, start: int = 0) -> list[int]:
        """`[ms, seq, ...]` of the positions from the `start`-th on: numbers orjson writes
        and reads in C."""
        return self._parts[2 * start :].tolist()

    def copy(self) -> Positions:
        copied = Positions()
        copied._parts = self._parts[:]  # one copy of the numbers, no Position made
        return copied

    def extend(self, other: Positions) -> None:
        self._parts.extend(other._parts)

    def truncate(self, count: int) -> None:
        """Keep the first `count` positions."""
        del self._parts[2 * count :]
