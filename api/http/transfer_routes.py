"""Export and import of a tenant's events (workers/app/transfer.py): the export streamed as
JSON lines, the import a batch of those lines at a time."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field

from assocmem.api.http import response_schemas as out
from assocmem.api.http.fields import POSITION_PATTERN
from assocmem.api.http.principal import Caller
from assocmem.api.http.schemas import Strict
from assocmem.workers.app.transfer import MAX_IMPORTED, ExportFilter, since_point

NDJSON = "application/x-ndjson"
_Name = Annotated[str | None, Query(min_length=1, max_length=200)]


EXPORTED_LINE = {
    "type": "object",
    "required": ["position", "event"],
    "properties": {
        "position": {"type": "string", "pattern": POSITION_PATTERN},
        "event": {"type": "object", "required": ["type"]},
    },
}
"""What the document says of a line (the event's own fields are checked as they are
appended: each type has its own)."""


class ImportIn(Strict):
    events: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_IMPORTED,
        description="Lines of an export, in its order: each {position, event}.",
        json_schema_extra={"items": EXPORTED_LINE},
    )


def export_events(
    request: Request,
    caller: Caller,
    user: _Name = None,
    session: _Name = None,
    namespace: _Name = None,
    since: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=64,
            description="Events at or after this stream position or ISO time only",
        ),
    ] = None,
) -> StreamingResponse:
    """The tenant's events as JSON lines, oldest first, each {position, event} (the event as
    the log stores it), narrowed to a user, a session, a namespace or a time. Admin keys
    only. `assocmem import` (POST /v1/import) appends them to another tenant or pipeline."""
    where = ExportFilter(user, session, namespace, since_point(since) if since else None)
    lines = request.app.state.application.export(caller, where)
    return StreamingResponse(lines, media_type=NDJSON)


def import_events(body: ImportIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Append up to 1,000 lines of an export: at their own positions where they all come
    after the log's end (into an empty tenant the state is then the source's, to the
    content hash), else anew; a line imported before is not stored again. Admin keys only."""
    done = request.app.state.application.import_events(caller, body.events)
    return {
        "events": done.events,
        "appended": done.appended,
        "duplicates": done.duplicates,
        "kept_positions": done.kept_positions,
        "position": done.position,
    }


ROUTES = [("/v1/import", import_events, "POST", 202, out.ImportedOut)]
STREAMED = [("/v1/export", export_events, NDJSON)]
"""Routes whose answer is streamed in their own media type (added apart from ROUTES)."""
