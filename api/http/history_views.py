"""The history queries' results as JSON (concepts as labels, with their keys)."""

from __future__ import annotations

from typing import Any

from assocmem.engine.history.audit import MemoryEvent
from assocmem.engine.history.link_diff import LinkChangeBetween
from assocmem.workers.app.history import DeadLetters, Difference, Resent
from assocmem.workers.store.ports import STRAY_MARK


def memory_audit_view(memory_id: str, events: list[MemoryEvent]) -> dict[str, Any]:
    return {
        "id": memory_id,
        "events": [
            {
                "position": str(e.position),
                "ts": e.ts,
                "agent": e.agent,
                "type": e.type,
                "detail": e.detail,
            }
            for e in events
        ],
    }


def _between(change: LinkChangeBetween) -> dict[str, Any]:
    return {
        "source": change.source,
        "target": change.target,
        "source_key": change.source_key,
        "target_key": change.target_key,
        "before": {"written": change.before[0], "taught": change.before[1]},
        "after": {"written": change.after[0], "taught": change.after[1]},
    }


def diff_view(found: Difference) -> dict[str, Any]:
    links = found.links
    return {
        "first": str(found.first),
        "second": str(found.second),
        "appeared": [_between(c) for c in links.appeared],
        "vanished": [_between(c) for c in links.vanished],
        "changed": [_between(c) for c in links.changed],
        "totals": links.totals,
    }


def dead_letters_view(found: DeadLetters) -> dict[str, Any]:
    return {
        "letters": [
            {
                "position": str(d.position),
                "reason": d.reason,
                "raw": _shown(d.raw),
            }
            for d in found.letters
        ],
        "total": found.total,
    }


def _shown(raw: bytes | None) -> str | None:
    """The entry as text; a stray one's fields without their mark (workers/store/ports.py)."""
    return raw.removeprefix(STRAY_MARK).decode("utf-8", "replace") if raw is not None else None


def resent_view(resent: list[Resent]) -> dict[str, Any]:
    return {
        "resent": [
            {
                "position": str(r.position),
                "appended": str(r.appended) if r.appended is not None else None,
                "reason": r.reason,
            }
            for r in resent
        ]
    }
