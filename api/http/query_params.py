"""Query parameters the GET routes share, bounded like the bodies' fields (api/http/fields.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from assocmem.api.http.fields import LAST_TIME, MAX_TIME_EXPRESSION, MAX_ZONE_LENGTH

When = Annotated[
    str | None,
    Query(
        max_length=MAX_TIME_EXPRESSION,
        description="A time expression: 'last week', '上个月', 'since March'",
    ),
]
Start = Annotated[
    float | None,
    Query(ge=0, le=LAST_TIME, allow_inf_nan=False, description="Range start, unix seconds"),
]
End = Annotated[
    float | None,
    Query(
        ge=0, le=LAST_TIME, allow_inf_nan=False, description="Range end (exclusive), unix seconds"
    ),
]
Category = Annotated[str | None, Query(max_length=100)]
Zone = Annotated[str | None, Query(max_length=MAX_ZONE_LENGTH, description="IANA time zone")]
