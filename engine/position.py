"""Stream positions ("<ms>-<seq>", Redis entry ids): parsing and ordering."""

from __future__ import annotations

import re

ZERO = "0-0"
"""The position before the first event."""

_POSITION = re.compile(r"^(\d{1,20})-(\d{1,20})$")


def parse_position(position: str) -> tuple[int, int]:
    match = _POSITION.match(position)
    if match is None:
        raise ValueError(
            f"position {position!r} is malformed: expected '<ms>-<seq>', e.g. 1700000000000-0"
        )
    return int(match.group(1)), int(match.group(2))


def is_valid_position(position: str) -> bool:
    return _POSITION.match(position) is not None


def is_after(position: str, other: str) -> bool:
    return parse_position(position) > parse_position(other)
