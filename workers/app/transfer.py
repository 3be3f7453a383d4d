"""Export and import: a tenant's events as JSON lines, one `{"position", "event"}` object a
line (the event as the log stores it), and back.

An import checks every line before it appends anything. Where every position comes after
the log's end (always so into an empty tenant) the events keep their positions, so the
state folded from them is the source's, to the content hash; otherwise they are appended
anew, each under its own idempotency key or, without one, `import-<its position>`. Either
way a second import of the same lines stores nothing twice: an event found at its own
position, as it was, or a key seen before, is a duplicate."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import orjson

from assocmem.engine.errors import EngineError
from assocmem.engine.events.envelope import Event, decode_event, encode_event
from assocmem.engine.events.registry import event_type
from assocmem.engine.position import ZERO, Position, just_before
from assocmem.workers.app.request_values import parse_point
from assocmem.workers.errors import InvalidRequest
from assocmem.workers.store.ports import EventLog, iter_entries

MAX_IMPORTED = 1000
"""Lines of one import request (the client sends a file in batches of this many)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ExportFilter:
    user: str | None = None
    session: str | None = None
    namespace: str | None = None
    since: Position | None = None
    """Events at or after this position only."""

    def passes(self, envelope: dict[str, object]) -> bool:
        return all(
            wanted is None or envelope.get(name) == wanted
            for name, wanted in (
                ("user", self.user),
                ("session", self.session),
                ("namespace", self.namespace),
            )
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Imported:
    events: int
    """Lines read."""
    appended: int
    duplicates: int
    kept_positions: bool
    position: str | None
    """The last position the import wrote (None if it wrote nothing)."""


def exported(log: EventLog, tenant: str, where: ExportFilter) -> Iterator[bytes]:
    """The tenant's events that `where` passes, oldest first, a JSON line each (an entry
    that is no event, which the fold refused, is left out)."""
    after = just_before(where.since) if where.since is not None and where.since > ZERO else ZERO
    for chunk in iter_entries(log, tenant, after):
        for position, raw in chunk:
            try:
                envelope = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(envelope, dict) and where.passes(envelope):
                line = {"position": str(position), "event": envelope}
                yield orjson.dumps(line) + b"\n"


def parsed(lines: list[object], tenant: str) -> list[tuple[Position, Event]]:
    """The events of an import's lines (each an object with `position` and `event`), into
    `tenant`; InvalidRequest naming the first line that is no sound event, or out of order."""
    if not 1 <= len(lines) <= MAX_IMPORTED:
        raise InvalidRequest(f"events has {len(lines)} lines: expected 1 to {MAX_IMPORTED}")
    found: list[tuple[Position, Event]] = []
    for n, line in enumerate(lines):
        where = f"events[{n}]"
        if not isinstance(line, dict) or set(line) != {"position", "event"}:
            raise InvalidRequest(f"{where} is not an exported line: expected {{position, event}}")
        try:
            position = Position.parse(str(line["position"]))
            event = decode_event(orjson.dumps(line["event"]), position)
            event_type(event.type).check(event.data)
        except (EngineError, ValueError) as exc:
            raise InvalidRequest(f"{where}: {exc}") from exc
        if found and position <= found[-1][0]:
            raise InvalidRequest(
                f"{where} is at {position}, not after {found[-1][0]}: expected log order"
            )
        found.append((position, dataclasses.replace(event, tenant=tenant)))
    return found


def already_there(log: EventLog, tenant: str, events: list[tuple[Position, Event]]) -> list[bool]:
    """Per event, whether the log holds it at its own position, as it is."""
    held = dict(log.entries_at(tenant, [position for position, _ in events]))
    return [held.get(position) == encode_event(event) for position, event in events]


def since_point(text: str) -> Position:
    """An export's `since`: a stream position, or an ISO time standing for the first
    position at or after it."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return parse_point(text, "since")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return Position(max(0, int(moment.timestamp() * 1000)), 0)
