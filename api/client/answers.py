"""Answers as the clients give them where the service's own shapes are not enough: a
degraded read or chain (the client answered empty) and one item of a mixed batch."""

from __future__ import annotations

from pydantic import BaseModel

from assocmem.api.http import response_schemas as out


class Recall(out.ReadOut):
    """A read's answer. `degraded`: the service was down, slow or refusing for rate and
    the client answered empty instead of raising (degrade_after); `reason` says why."""

    position: str | None = None  # type: ignore[assignment]
    depth: str | None = None  # type: ignore[assignment]
    query_concepts: list[out.Concept] = []
    matches: list[out.NearMiss] = []
    expanded_concepts: list[out.ExpandedConcept] = []
    chain_concepts: list[out.ChainConcept] = []
    chains: list[out.Chain] = []
    time: out.TimeWindow | None = None
    items: list[out.Item] = []
    degraded: bool = False
    reason: str | None = None


class Chains(out.ChainsOut):
    """A chain search's answer; `degraded` and `reason` as in `Recall`."""

    position: str | None = None  # type: ignore[assignment]
    concepts: list[str] = []
    concept_keys: list[str] = []
    unknown_concepts: list[str] = []
    chains: list[out.Chain] = []
    degraded: bool = False
    reason: str | None = None


class Published(BaseModel):
    """One item of a mixed batch: its position and whether it was stored already; a memory
    or an activity also has its id and concepts, a feedback its concepts."""

    position: str
    duplicate: bool = False
    id: str | None = None
    concepts: list[str] | None = None
    concept_keys: list[str] | None = None
    tiers: list[int] | None = None
    importance: int | None = None
