"""Stream positions ("<ms>-<seq>", Redis entry ids) as one small ordered, hashable type.

A position is parsed once, where an entry is decoded or an append returns; from there
on it compares as a pair of integers and prints back as "<ms>-<seq>".
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import quoted

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
