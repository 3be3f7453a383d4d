"""Engine results as JSON-able dicts: the shapes of the API's responses."""

from __future__ import annotations

from typing import Any

from assocmem.engine.activity import PeriodSummary
from assocmem.engine.chains import Chain
from assocmem.engine.graph import Edge
from assocmem.engine.prompt import PromptText
from assocmem.engine.recall import Item, Recall, Via
from assocmem.engine.snapshot import content_hash
from assocmem.engine.state import Memory, State

from .timing import Window


def recall_view(result: Recall, window: Window) -> dict[str, Any]:
    return {
        "position": result.position,
        "depth": result.depth,
        "query_concepts": list(result.query_concepts),
        "matches": [
            {"query": m.query, "concept": m.name, "similarity": m.similarity}
            for m in result.matches
            if not m.is_exact
        ],
        "expanded_concepts": result.expanded_concepts,
        "chain_concepts": result.chain_concepts,
        "chains": [chain_view(c) for c in result.chains],
        "time": time_view(window),
        "items": [item_view(item) for item in result.items],
    }


def time_view(window: Window) -> dict[str, Any] | None:
    if window.match is None and window.range is None:
        return None
    view: dict[str, Any] = {
        "applied": window.range is not None,
        "start": window.range.start if window.range else None,
        "end": window.range.end if window.range else None,
    }
    if window.match is not None:
        view |= {
            "expression": window.match.expression,
            "confidence": window.match.confidence,
            "found_start": window.match.start.isoformat(),
            "found_end": window.match.end.isoformat(),
        }
    return view


def memory_view(m: Memory) -> dict[str, Any]:
    view = {
        "id": m.id,
        "kind": m.kind,
        "text": m.text,
        "concepts": list(m.concepts),
        "agent": m.agent,
        "ts": m.ts,
        "importance": m.importance,
        "valence": round(m.valence, 6),
        "accesses": m.accesses,
    }
    if m.superseded_by:
        view["superseded_by"] = m.superseded_by
    if m.meta:
        view |= m.meta
    return view


def item_view(item: Item) -> dict[str, Any]:
    view = memory_view(item.memory)
    view |= {
        "source": item.source,
        "score": item.score,
        "matched": list(item.matched),
        "via": [via_view(v) for v in item.via],
    }
    if item.chain is not None:
        view["chain"] = chain_view(item.chain)
    return view


def via_view(v: Via) -> dict[str, Any]:
    return {
        "concept": v.concept,
        "from": v.source,
        "weight": v.weight,
        "count": v.count,
        "learned": v.learned,
        "ppmi": v.ppmi,
        "strength": v.strength,
    }


def chain_view(chain: Chain) -> dict[str, Any]:
    return {
        "path": list(chain.path),
        "hidden": list(chain.hidden),
        "total": chain.total,
        "hops": [
            {
                "from": h.source,
                "to": h.target,
                "strength": h.strength,
                "count": h.count,
                "learned": h.learned,
                "evidence": list(h.evidence),
            }
            for h in chain.hops
        ],
    }


def prompt_view(prompt: PromptText) -> dict[str, Any]:
    return {
        "text": prompt.text,
        "tokens": prompt.tokens,
        "budget": prompt.budget,
        "layers": prompt.layers,
        "left_out": prompt.left_out,
    }


def period_view(p: PeriodSummary) -> dict[str, Any]:
    return {
        "start": p.start.isoformat(),
        "entries": p.entries,
        "categories": p.categories,
        "top_concepts": p.top_concepts,
        "highlights": [memory_view(m) for m in p.highlights],
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
    return {
        "position": state.position,
        "hash": content_hash(state),
        "memories": len(state.memories),
        "concepts": len(state.concepts),
        "documents": state.documents,
        "written_links": state.written_links(),
        "taught_links": state.taught_links(),
    }
