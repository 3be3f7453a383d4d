"""Engine results as JSON-able dicts: the shapes of the API's responses."""

from __future__ import annotations

from typing import Any

from assocmem.engine.graph import Edge
from assocmem.engine.recall import Item, Recall
from assocmem.engine.snapshot import content_hash
from assocmem.engine.state import State


def recall_view(result: Recall) -> dict[str, Any]:
    return {
        "position": result.position,
        "query_concepts": list(result.query_concepts),
        "expanded_concepts": result.expanded_concepts,
        "items": [item_view(item) for item in result.items],
    }


def item_view(item: Item) -> dict[str, Any]:
    m = item.memory
    return {
        "id": m.id,
        "text": m.text,
        "concepts": list(m.concepts),
        "source": item.source,
        "score": item.score,
        "via": [
            {
                "concept": v.concept,
                "from": v.source,
                "weight": v.weight,
                "count": v.count,
                "learned": v.learned,
            }
            for v in item.via
        ],
        "agent": m.agent,
        "ts": m.ts,
        "importance": m.importance,
        "valence": round(m.valence, 6),
    }


def edge_view(edge: Edge) -> dict[str, Any]:
    return {
        "source": edge.source,
        "target": edge.target,
        "weight": edge.weight,
        "count": edge.count,
        "learned": edge.learned,
        "changed_at": edge.changed_at,
    }


def state_view(state: State) -> dict[str, Any]:
    links = sum(len(row) for row in state.counts.values()) // 2
    taught = sum(1 for row in state.learned.values() for v in row.values() if v) // 2
    return {
        "position": state.position,
        "hash": content_hash(state),
        "memories": len(state.memories),
        "concepts": len(state.concepts),
        "written_links": links,
        "taught_links": taught,
    }
