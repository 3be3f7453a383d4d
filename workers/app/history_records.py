"""Replay and link-audit results as JSON-ready records: what their jobs return and what the
API sends for them (concepts as labels, with their keys)."""

from __future__ import annotations

from typing import Any

from assocmem.engine.history.audit import LinkHistory
from assocmem.workers.app.history import Verification


def link_audit_record(history: LinkHistory) -> dict[str, Any]:
    last = history.changes[-1] if history.changes else None
    return {
        "source": history.labels[0],
        "target": history.labels[1],
        "source_key": history.source,
        "target_key": history.target,
        "count": last.count if last else 0,
        "learned": last.learned if last else 0.0,
        "weight": last.weight if last else 0.0,
        "written_share": round(history.written_share, 6),
        "changes": [
            {
                "position": str(c.position),
                "ts": c.ts,
                "agent": c.agent,
                "type": c.type,
                "written": c.written,
                "taught": c.taught,
                "count": c.count,
                "learned": c.learned,
                "weight": c.weight,
            }
            for c in history.changes
        ],
    }


def verification_record(found: Verification) -> dict[str, Any]:
    return {
        "position": str(found.position),
        "replayed_hash": found.replayed,
        "served_hash": found.served,
        "matches": found.matches,
        "difference": found.difference,
    }
