"""The application's results as JSON: the bodies of the API's responses.

Where a person reads a concept, the field holds its label (the word agents wrote for
it); the canonical concept, what matching uses, stays beside it under a `*key` name.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from assocmem.engine.history.activity import PeriodSummary
from assocmem.engine.position import ZERO
from assocmem.engine.recall.chains import Chain
from assocmem.engine.recall.graph import Edge
from assocmem.engine.recall.prompt import PromptText
from assocmem.engine.recall.recall import Item, Via
from assocmem.engine.recall.time_window import Window
from assocmem.engine.state.memory import Memory
from assocmem.workers.app import results
from assocmem.workers.jobs.job_list import JobInfo
from assocmem.workers.store.archive import Segment
from assocmem.workers.store.ports import Appended


def concept_view(key: str, labels: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"concept": labels.get(key, key), "key": key, **extra}


def read_view(read: results.Read) -> dict[str, Any]:
    found, labels = read.recall, read.recall.labels
    view: dict[str, Any] = {
        "position": str(found.position),
        "depth": found.depth,
        "query_concepts": [concept_view(c, labels) for c in found.query_concepts],
        "matches": [
            concept_view(m.name, labels, query=m.query, similarity=m.similarity)
            for m in found.matches
            if not m.is_exact
        ],
        "expanded_concepts": [
            concept_view(c, labels, strength=s) for c, s in found.expanded_concepts.items()
        ],
        "chain_concepts": [
            concept_view(c, labels, rank=r) for c, r in found.chain_concepts.items()
        ],
        "chains": [chain_view(c) for c in found.chains],
        "time": time_view(read.window),
        "items": [item_view(item, labels, found.relabelled) for item in found.items],
    }
    if read.prompt is not None:
        view["prompt"] = prompt_view(read.prompt)
    return view


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


def memory_view(m: Memory, labels: Mapping[str, str]) -> dict[str, Any]:
    view = {
        "id": m.id,
        "kind": m.kind,
        "text": m.text,
        "concepts": [labels.get(c, c) for c in m.concepts],
        "concept_keys": list(m.concepts),
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


def item_view(item: Item, labels: dict[str, str], relabelled: Mapping[str, str]) -> dict[str, Any]:
    view = memory_view(item.memory, relabelled)
    view |= {
        "source": item.source,
        "score": item.score,
        "matched": [labels.get(c, c) for c in item.matched],
        "matched_keys": list(item.matched),
        "via": [via_view(v) for v in item.via],
    }
    if item.chain is not None:
        view["chain"] = chain_view(item.chain)
    if item.beside is not None:
        view["beside"] = {
            "id": item.beside,
            "written": "after" if item.after else "before",
            "taught": item.taught,
        }
    return view


def via_view(v: Via) -> dict[str, Any]:
    return {
        "concept": v.label,
        "key": v.concept,
        "from": v.source_label,
        "from_key": v.source,
        "weight": v.weight,
        "count": v.count,
        "learned": v.learned,
        "ppmi": v.ppmi,
        "strength": v.strength,
    }


def chain_view(chain: Chain) -> dict[str, Any]:
    return {
        "path": list(chain.labels),
        "path_keys": list(chain.path),
        "hidden": list(chain.labels[1:-1]),
        "total": chain.total,
        "hops": [
            {
                "from": h.source_label,
                "to": h.target_label,
                "from_key": h.source,
                "to_key": h.target,
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


def written_view(written: results.Written) -> dict[str, Any]:
    return {
        "position": str(written.position),
        "id": str(written.position),
        "concepts": list(written.labels),
        "concept_keys": list(written.concepts),
        "tiers": written.tiers,
        "duplicate": written.is_duplicate,
    }


def ingested_view(ingested: results.Ingested) -> dict[str, Any]:
    return {
        "positions": [str(p) for p in ingested.positions],
        "units": ingested.units,
        "links_from_units": ingested.links_from_units,
        "duplicate": ingested.is_duplicate,
    }


def rated_view(rated: results.Rated) -> dict[str, Any]:
    return {
        "position": str(rated.position),
        "duplicate": rated.is_duplicate,
        "concepts": list(rated.labels),
        "concept_keys": list(rated.concepts),
    }


def chains_view(found: results.Chains) -> dict[str, Any]:
    return {
        "position": str(found.position),
        "concepts": list(found.labels),
        "concept_keys": list(found.concepts),
        "unknown_concepts": list(found.unknown),
        "chains": [chain_view(c) for c in found.chains],
    }


def neighbourhood_view(found: results.Neighbourhood) -> dict[str, Any]:
    return {
        "position": str(found.position),
        "concepts": list(found.labels),
        "concept_keys": list(found.concepts),
        "unknown_concepts": list(found.unknown),
        "hops": found.hops,
        "edges": [edge_view(e) for e in found.edges],
    }


def edge_view(edge: Edge) -> dict[str, Any]:
    return {
        "source": edge.source_label,
        "target": edge.target_label,
        "source_key": edge.source,
        "target_key": edge.target,
        "weight": edge.weight,
        "count": edge.count,
        "learned": edge.learned,
        # No memory carries both and nothing taught it: documents wrote it, which the state
        # keeps no position of (`audit link` reads them from the log)
        "changed_at": str(edge.changed_at) if edge.changed_at != ZERO else None,
    }


def activities_view(found: results.Activities) -> dict[str, Any]:
    return {
        "position": str(found.position),
        "start": found.start,
        "end": found.end,
        "items": [memory_view(m, found.labels) for m in found.entries],
    }


def summary_view(found: results.Summary) -> dict[str, Any]:
    return {
        "position": str(found.position),
        "period": found.period,
        "start": found.start,
        "end": found.end,
        "periods": [period_view(p, found.labels) for p in found.periods],
    }


def period_view(p: PeriodSummary, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "start": p.start.isoformat(),
        "entries": p.entries,
        "categories": p.categories,
        "top_concepts": [labels.get(c, c) for c in p.top_concepts],
        "highlights": [memory_view(m, labels) for m in p.highlights],
    }


def state_view(summary: results.StateSummary) -> dict[str, Any]:
    return {
        "position": str(summary.position),
        "hash": summary.hash,
        "memories": summary.memories,
        "concepts": summary.concepts,
        "documents": summary.documents,
        "written_links": summary.written_links,
        "taught_links": summary.taught_links,
    }


def health_view(health: results.Health) -> dict[str, Any]:
    served = health.served_position
    return {
        "status": "ok",
        "tenant": health.tenant,
        "log_length": health.log_length,
        "served_position": str(served) if served is not None else None,
    }


def job_view(job: JobInfo) -> dict[str, Any]:
    def moment(value: datetime | None) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "id": job.id,
        "queue": job.queue,
        "state": job.state,
        "function": job.function,
        "args": job.args,
        "enqueued_at": moment(job.enqueued_at),
        "started_at": moment(job.started_at),
        "ended_at": moment(job.ended_at),
        "error": job.error,
        "retries_left": job.retries_left,
        "progress": job.progress,
        "result": job.result,
        "retry_at": moment(job.retry_at),
    }


def jobs_view(jobs: list[JobInfo]) -> dict[str, Any]:
    return {"jobs": [job_view(j) for j in jobs]}


def archive_view(segments: list[Segment]) -> dict[str, Any]:
    return {
        "segments": [
            {
                "first": str(s.first),
                "last": str(s.last),
                "count": s.count,
                "size": s.size,
                "raw_size": s.raw_size,
                "sha256": s.sha256,
            }
            for s in segments
        ],
        "entries": sum(s.count for s in segments),
        "stored_bytes": sum(s.size for s in segments),
        "raw_bytes": sum(s.raw_size for s in segments),
    }


def published_view(published: object) -> dict[str, Any]:
    """One item of a mixed batch, as its own route answers it."""
    if isinstance(published, results.Written):
        return written_view(published)
    if isinstance(published, results.Rated):
        return rated_view(published)
    assert isinstance(published, Appended)
    return {"position": str(published.position), "duplicate": published.is_duplicate}
