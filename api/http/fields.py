"""The field types of the API's request bodies: strict, finite, valid Unicode, bounded.

Strict: no bool as a number, no string as a number, no 4.0 as a whole number. Finite:
NaN, Infinity and numbers beyond a double are refused (JSON numbers like 1e400 parse as
infinity). Valid Unicode: a lone surrogate ("\\ud800") cannot be stored or sent back.
Each bound is both enforced here, with a message in the API's own words, and declared in
the OpenAPI document.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from assocmem.engine.concept import MAX_CONCEPT_LENGTH
from assocmem.engine.events.payload import LAST_TIME, MAX_LABEL_LENGTH

POSITION_PATTERN = r"^\d{1,20}-\d{1,20}$"
MAX_KEY_LENGTH = 200
"""Characters in an idempotency key."""
MAX_TIME_EXPRESSION = 200
"""Characters in a time expression ("last week", "上个月")."""
MAX_ZONE_LENGTH = 64


def _valid_unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError(
            "invalid_unicode", "is not valid Unicode: it holds a lone surrogate"
        ) from None
    if "\x00" in value:  # no text of ours means one, and C tools cut a string at it
        raise PydanticCustomError("nul_character", "holds a NUL character (U+0000)")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "is blank: expected a word")
    return value


def _in_range(low: float, high: float | None) -> Any:
    def check(value: float) -> float:
        if value < low or (high is not None and value > high):
            expected = f"{low} to {high}" if high is not None else f"{low} or more"
            raise PydanticCustomError(
                "out_of_range", "is out of range: expected {expected}", {"expected": expected}
            )
        return value

    return AfterValidator(check)


def ranged_int(low: int, high: int | None) -> Any:
    schema = {"minimum": low} | ({"maximum": high} if high is not None else {})
    return Annotated[
        int, BeforeValidator(_whole), _in_range(low, high), Field(json_schema_extra=schema)
    ]


def _whole(value: object) -> object:
    """5.0 is the integer 5, as JSON Schema counts it; 5.5 stays a float, and is refused."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def ranged_float(low: float, high: float | None) -> Any:
    schema = {"minimum": low} | ({"maximum": high} if high is not None else {})
    return Annotated[float, _in_range(low, high), Field(json_schema_extra=schema)]


NO_NUL = "^[^\\x00]*$"
"""What `_valid_unicode` says of NUL, as the OpenAPI document says it."""


def text(most: int, least: int = 1, blank: bool = True) -> Any:
    """Text of `least` to `most` characters, valid Unicode, with no NUL character; `blank`:
    whether spaces alone are text (the document says what the service checks after it)."""
    pattern = NO_NUL if blank else NOT_BLANK
    return Annotated[
        str,
        AfterValidator(_valid_unicode),
        Field(min_length=least, max_length=most, json_schema_extra={"pattern": pattern}),
    ]


def _point(value: str) -> str:
    if re.match(POSITION_PATTERN, value):
        return value
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError(
            "not_a_point",
            "is neither a stream position nor an ISO time: expected e.g. 1700000000000-0"
            " or 2026-11-30T12:00:00Z",
        ) from None
    return value


PointText = Annotated[
    str,
    AfterValidator(_point),
    Field(min_length=1, max_length=64, examples=["1700000000000-0", "2026-11-30T12:00:00Z"]),
]
"""A position, or an ISO time standing for the last position at or before it."""

NOT_BLANK = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
"""Some character but a space, and no NUL: what `_not_blank` and `_valid_unicode` say."""
CONCEPT_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_CONCEPT_LENGTH,
    "pattern": NOT_BLANK,
}
"""The JSON schema of a `Concept`, for a parameter FastAPI declares without it."""

Concept = Annotated[
    str,
    AfterValidator(_valid_unicode),
    AfterValidator(_not_blank),
    Field(min_length=1, max_length=MAX_CONCEPT_LENGTH, json_schema_extra={"pattern": NOT_BLANK}),
]
"""A concept as a caller names it: some word in it (extraction normalises the rest)."""
Label = text(MAX_LABEL_LENGTH, blank=False)  # engine/events/payload.py check_label
Key = text(MAX_KEY_LENGTH)


def _position(value: str) -> str:
    if not re.match(POSITION_PATTERN, value):
        raise PydanticCustomError(
            "not_a_position",
            "is not a stream position: expected one a write returned, '<ms>-<seq>',"
            " e.g. 1700000000000-0",
        )
    return value


PositionText = Annotated[
    str,
    AfterValidator(_position),
    Field(json_schema_extra={"pattern": POSITION_PATTERN}, examples=["1700000000000-0"]),
]
Importance = ranged_int(1, 5)
UnixTime = ranged_float(0.0, LAST_TIME)
