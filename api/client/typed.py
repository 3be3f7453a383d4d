"""Typed results for Python agents: the clients' answers as pydantic models (the shapes of
the OpenAPI document, response_schemas.py), so `found.items[0].via[0].weight` is checked by
a type checker and completed by an editor.

`TypedClient` and `AsyncTypedClient` wrap `Client` and `AsyncClient` (key, scope, timeouts,
retries that reuse idempotency keys, reads waiting for the client's own writes, degraded
mode) and only validate what they answer. A field the service adds later is ignored, not
refused, so an older SDK keeps working against a newer service. `.raw` is the dict client
underneath, for what has no model here (keys, jobs, archive)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from assocmem.api.client.async_client import AsyncClient
from assocmem.api.client.sync import DEFAULT_TIMEOUT, Client
from assocmem.api.http import response_schemas as out

Answer = TypeVar("Answer", bound=BaseModel)


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


def _as(model: type[Answer], answer: dict[str, Any]) -> Answer:
    return model.model_validate(answer)


def _each(model: type[Answer], answers: list[dict[str, Any]]) -> list[Answer]:
    return [model.model_validate(answer) for answer in answers]


class TypedClient:
    def __init__(
        self,
        url: str,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """The arguments of `Client`."""
        self.raw = Client(url, timeout, api_key, degrade_after, scope)

    def __enter__(self) -> TypedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.raw.close()

    @property
    def position(self) -> str | None:
        """The latest position this client's writes returned; its reads wait for it."""
        return self.raw.position

    def write(self, text: str, concepts: list[str] | None = None, **fields: Any) -> out.WrittenOut:
        """`fields`: importance, ts, key, supersedes (see `Client.write`)."""
        return _as(out.WrittenOut, self.raw.write(text, concepts, **fields))

    def write_many(self, items: list[dict[str, Any]]) -> list[out.WrittenOut]:
        return _each(out.WrittenOut, self.raw.write_many(items))

    def publish(self, items: list[dict[str, Any]]) -> list[Published]:
        return _each(Published, self.raw.publish(items))

    def read(
        self, text: str | None = None, concepts: list[str] | None = None, **options: Any
    ) -> Recall:
        return _as(Recall, self.raw.read(text, concepts, **options))

    def find_chain(self, concepts: list[str] | None = None, **options: Any) -> Chains:
        """`options`: text, floor, after."""
        return _as(Chains, self.raw.find_chain(concepts, **options))

    def feedback(self, ids: list[str], outcome: float, **fields: Any) -> out.RatedOut:
        """`fields`: concepts, text, key."""
        return _as(out.RatedOut, self.raw.feedback(ids, outcome, **fields))

    def set_importance(self, memory_id: str, importance: int) -> out.ImportanceOut:
        return _as(out.ImportanceOut, self.raw.set_importance(memory_id, importance))

    def log_activity(self, text: str, **fields: Any) -> out.WrittenOut:
        return _as(out.WrittenOut, self.raw.log_activity(text, **fields))

    def activities(self, **filters: Any) -> out.ActivitiesOut:
        return _as(out.ActivitiesOut, self.raw.activities(**filters))

    def activity_summary(self, period: str = "day", **filters: Any) -> out.SummaryOut:
        return _as(out.SummaryOut, self.raw.activity_summary(period, **filters))

    def ingest(self, title: str, text: str, **fields: Any) -> out.IngestedOut:
        """`fields`: scope, source, key."""
        return _as(out.IngestedOut, self.raw.ingest(title, text, **fields))

    def graph(self, concepts: list[str], hops: int = 1) -> out.GraphOut:
        return _as(out.GraphOut, self.raw.graph(concepts, hops))

    def state(self, as_of: str | None = None, without_feedback: bool = False) -> out.StateOut:
        return _as(out.StateOut, self.raw.state(as_of, without_feedback))

    def health(self) -> out.HealthOut:
        return _as(out.HealthOut, self.raw.health())

    def audit_link(self, source: str, target: str) -> out.LinkAuditOut:
        return _as(out.LinkAuditOut, self.raw.audit_link(source, target))

    def audit_memory(self, memory_id: str) -> out.MemoryAuditOut:
        return _as(out.MemoryAuditOut, self.raw.audit_memory(memory_id))

    def replay(self, until: str | None = None) -> out.VerificationOut:
        return _as(out.VerificationOut, self.raw.replay(until))

    def diff(self, first: str, second: str, limit: int | None = None) -> out.DiffOut:
        return _as(out.DiffOut, self.raw.diff(first, second, limit))

    def forget(self, kind: str, value: str) -> out.Job:
        """The erasure's job; its `result`, once finished, is the report (`raw.job(id)`)."""
        return _as(out.Job, self.raw.forget(kind, value))


class AsyncTypedClient:
    def __init__(
        self,
        url: str,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        degrade_after: float | None = None,
        scope: dict[str, str] | None = None,
    ) -> None:
        """The arguments of `AsyncClient`."""
        self.raw = AsyncClient(url, timeout, api_key, degrade_after, scope)

    async def __aenter__(self) -> AsyncTypedClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.raw.close()

    @property
    def position(self) -> str | None:
        return self.raw.position

    async def write(
        self, text: str, concepts: list[str] | None = None, **fields: Any
    ) -> out.WrittenOut:
        """`fields`: importance, ts, key."""
        return _as(out.WrittenOut, await self.raw.write(text, concepts, **fields))

    async def write_many(self, items: list[dict[str, Any]]) -> list[out.WrittenOut]:
        return _each(out.WrittenOut, await self.raw.write_many(items))

    async def publish(self, items: list[dict[str, Any]]) -> list[Published]:
        return _each(Published, await self.raw.publish(items))

    async def read(
        self, text: str | None = None, concepts: list[str] | None = None, **options: Any
    ) -> Recall:
        return _as(Recall, await self.raw.read(text, concepts, **options))

    async def find_chain(self, concepts: list[str] | None = None, **options: Any) -> Chains:
        """`options`: text."""
        return _as(Chains, await self.raw.find_chain(concepts, **options))

    async def feedback(self, ids: list[str], outcome: float, **fields: Any) -> out.RatedOut:
        return _as(out.RatedOut, await self.raw.feedback(ids, outcome, **fields))

    async def log_activity(self, text: str, **fields: Any) -> out.WrittenOut:
        return _as(out.WrittenOut, await self.raw.log_activity(text, **fields))

    async def graph(self, concepts: list[str], hops: int = 1) -> out.GraphOut:
        return _as(out.GraphOut, await self.raw.graph(concepts, hops))

    async def state(self) -> out.StateOut:
        return _as(out.StateOut, await self.raw.state())

    async def health(self) -> out.HealthOut:
        return _as(out.HealthOut, await self.raw.health())
