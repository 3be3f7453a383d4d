"""Every call of the HTTP API, written once: what each one sends and what kind of request
it is. The blocking and the asyncio clients inherit them (as redis-py's sync and asyncio
clients share its command mixins) and differ only in how they send a `Call`; the typed
clients validate the answer against the call's `answer` shape."""

from __future__ import annotations

import dataclasses
import json
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from assocmem.api.client.answers import Chains, Published, Recall
from assocmem.api.http import response_schemas as out

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

NO_ITEMS = {"items": [], "chains": []}
"""A read's answer when memory is unavailable (degraded mode)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Call:
    """One request of the API and how a client sends it."""

    method: str
    path: str
    body: Any = None
    params: dict[str, Any] | None = None
    keyed: bool = False
    """An append whose events all carry idempotency keys: safe to send again."""
    changes_nothing: bool = False
    """A POST that is safe to send again and answers no write position."""
    empty: dict[str, Any] | None = None
    """A read that degrades: its answer, flagged `degraded`, when memory is unavailable
    and the client was given `degrade_after`."""
    rebuilt: bool = False
    """It reads a rebuilt state (`as_of`, `without_feedback`): asked again while the
    service rebuilds it."""
    pick: str | None = None
    """The field of the answer the call returns (`items` of a batch)."""
    answer: type[BaseModel] | None = None
    """The answer's shape, which the typed clients validate (each item's, with `pick`)."""


WRITES = frozenset({"POST", "PATCH", "DELETE"})
"""Methods whose answer may name a write position, which the client's reads then wait for."""


def given(values: dict[str, Any]) -> dict[str, Any]:
    """The values that were given (not None)."""
    return {k: v for k, v in values.items() if v is not None}


def new_key() -> str:
    """An idempotency key for an append the caller gave none: retries send it again."""
    return uuid.uuid4().hex


def keyed(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with an idempotency key: its own, else a new one."""
    return body | {"key": body.get("key") or new_key()}


def is_rebuilt(body: dict[str, Any]) -> bool:
    """Whether a read or chain asks for a state rebuilt apart from the live one."""
    return body.get("as_of") is not None or bool(body.get("without_feedback"))


def tool(name: str) -> Callable[[F], F]:
    """Offer the call to agents as the MCP tool `name` as well: the MCP server makes the tool
    from the call's signature and docstring (api/mcp/server.py), so a call marked here needs
    nothing written there."""

    def mark(call: F) -> F:
        call.__dict__["tool"] = name
        return call

    return mark


def tool_calls() -> dict[str, str]:
    """MCP tool name -> the name of the call that answers it."""
    return {
        member.__dict__["tool"]: name
        for name, member in vars(Calls).items()
        if callable(member) and "tool" in getattr(member, "__dict__", {})
    }


def _quoted(part: str) -> str:
    return urllib.parse.quote(part, safe="")


class Calls(Generic[R]):
    """The API's calls; `R` is what the client's `_send` gives for an answer (a dict, an
    awaitable of one, or a typed model)."""

    position: str | None
    """The latest position this client's writes returned; its reads wait for it."""

    def _send(self, call: Call) -> R:
        raise NotImplementedError

    # Memories

    def write(
        self,
        text: str,
        concepts: list[str] | None = None,
        importance: int = 3,
        ts: float | None = None,
        key: str | None = None,
        supersedes: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        expires_at: float | None = None,
    ) -> R:
        """Append a memory; without a `key`, one is made, so a retry stores it once.
        `metadata`: a flat object of strings, numbers and booleans; `expires_at`: unix
        seconds after which reads leave it out (and the nightly pass erases it)."""
        body = {"text": text, "concepts": concepts, "importance": importance, "ts": ts}
        body |= given({"supersedes": supersedes or None, "key": key, "metadata": metadata})
        body |= given({"expires_at": expires_at})
        return self._send(
            Call("POST", "/v1/memories", keyed(body), keyed=True, answer=out.WrittenOut)
        )

    def write_many(self, items: list[dict[str, Any]]) -> R:
        """Append up to 1,000 memories at once; items without a `key` get one."""
        body = {"items": [keyed(item) for item in items]}
        return self._send(
            Call(
                "POST", "/v1/memories/batch", body, keyed=True, pick="items", answer=out.WrittenOut
            )
        )

    def publish(self, items: list[dict[str, Any]]) -> R:
        """Append up to 1,000 events of any kind at once, atomically: each item a dict with
        `type` (memory, activity, feedback, importance) and the fields of its own route;
        items without a `key` get one. Per item, what its own route answers."""
        body = {"items": [keyed(item) for item in items]}
        return self._send(
            Call("POST", "/v1/events/batch", body, keyed=True, pick="items", answer=Published)
        )

    @tool("get")
    def get_memory(self, memory_id: str) -> R:
        """One memory by its id: text, concepts in the agents' words, scope, importance,
        valence, accesses, supersession, time and position."""
        return self._send(Call("GET", f"/v1/memories/{_quoted(memory_id)}", answer=out.MemoryOut))

    @tool("update")
    def update_memory(
        self,
        memory_id: str,
        text: str,
        concepts: list[str] | None = None,
        importance: int = 3,
        key: str | None = None,
        metadata: dict[str, Any] | None = None,
        expires_at: float | None = None,
    ) -> R:
        """Write a new version of a memory: it supersedes the old one, which reads no longer
        return (its history keeps it). Returns the new memory's id."""
        body = {"text": text, "concepts": concepts, "importance": importance, "key": key}
        body = keyed(body | given({"metadata": metadata, "expires_at": expires_at}))
        path = f"/v1/memories/{_quoted(memory_id)}"
        return self._send(Call("PATCH", path, body, keyed=True, answer=out.WrittenOut))

    @tool("list")
    def list_memories(
        self,
        agent: str | None = None,
        kind: str | None = None,
        user: str | None = None,
        session: str | None = None,
        namespace: str | None = None,
        start: float | None = None,
        end: float | None = None,
        superseded: bool = False,
        metadata: dict[str, Any] | None = None,
        cursor: str | None = None,
        limit: int = 100,
        filters: dict[str, Any] | None = None,
    ) -> R:
        """The memories this key sees, newest first, filtered by kind (memory or activity),
        time (unix seconds, start <= ts < end), writer (agent) and scope; up to `limit`,
        with the `cursor` to pass for the next page (null after the last). `metadata`: values
        the memories' metadata must hold, each key its value; `filters`: conditions as reads
        take them ({"priority": {"gte": 2}}, one level of AND / OR)."""
        params = given(
            {"agent": agent, "kind": kind, "user": user, "session": session}
            | {"namespace": namespace, "start": start, "end": end, "cursor": cursor}
        ) | {"superseded": superseded, "limit": limit}
        if metadata:
            params["metadata"] = [
                f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in metadata.items()
            ]
        if filters:
            params["filters"] = json.dumps(filters)
        return self._send(Call("GET", "/v1/memories", params=params, answer=out.MemoriesOut))

    @tool("delete")
    def delete_memory(self, memory_id: str, erase: bool = False) -> R:
        """Delete a memory: no read, listing or fetch returns it again, and the links it
        wrote are taken off. `erase` (an admin key's) also takes its write out of the log
        for real, in a job (the answer's `erasure`)."""
        path = f"/v1/memories/{_quoted(memory_id)}"
        params = {"erase": "true"} if erase else None
        return self._send(Call("DELETE", path, params=params, answer=out.DeletedOut))

    def set_importance(self, memory_id: str, importance: int) -> R:
        """Change a memory's importance (1-5)."""
        path = f"/v1/memories/{_quoted(memory_id)}/importance"
        return self._send(Call("POST", path, {"importance": importance}, answer=out.ImportanceOut))

    # Reads

    def read(self, text: str | None = None, concepts: list[str] | None = None, **options: Any) -> R:
        """Recall; `options` are the fields of ReadIn (depth, limit, time, token_budget, ...).

        `after` defaults to the latest position this client's writes returned."""
        body = {"text": text, "concepts": concepts, "after": self.position} | given(options)
        return self._send(
            Call(
                "POST",
                "/v1/read",
                body,
                changes_nothing=True,
                empty=NO_ITEMS,
                rebuilt=is_rebuilt(body),
                answer=Recall,
            )
        )

    def find_chain(
        self,
        concepts: list[str] | None = None,
        text: str | None = None,
        floor: float | None = None,
        after: str | None = None,
    ) -> R:
        """The strongest chains of links between the concepts. `after`: a write's position
        to wait for; by default the latest of this client's writes."""
        body = {"concepts": concepts, "text": text, "after": after or self.position}
        body |= given({"floor": floor})
        return self._send(
            Call(
                "POST", "/v1/chain", body, changes_nothing=True, empty={"chains": []}, answer=Chains
            )
        )

    def graph(self, concepts: list[str], hops: int = 1) -> R:
        """The links around the concepts: weight, co-occurrence count, learned delta."""
        params = {"concepts": concepts, "hops": hops}
        return self._send(Call("GET", "/v1/graph", params=params, answer=out.GraphOut))

    def state(self, as_of: str | None = None, without_feedback: bool = False) -> R:
        """Position, content hash and sizes of the served (or a rebuilt) state."""
        params = {"without_feedback": without_feedback} | given({"as_of": as_of or None})
        return self._send(
            Call("GET", "/v1/state", params=params, rebuilt=is_rebuilt(params), answer=out.StateOut)
        )

    def health(self) -> R:
        return self._send(Call("GET", "/v1/health", answer=out.HealthOut))

    # Activities, documents, feedback

    def log_activity(self, text: str, **fields: Any) -> R:
        """`fields`: category, tags, source, importance, ts, key (made when absent)."""
        body = keyed({"text": text} | given(fields))
        return self._send(Call("POST", "/v1/activities", body, keyed=True, answer=out.WrittenOut))

    def activities(self, **filters: Any) -> R:
        """`filters`: date, when, start, end, category, keyword, source, limit, tz."""
        return self._send(
            Call("GET", "/v1/activities", params=given(filters), answer=out.ActivitiesOut)
        )

    def activity_summary(self, period: str = "day", **filters: Any) -> R:
        """`filters`: when, start, end, category, tz."""
        params = {"period": period} | given(filters)
        return self._send(
            Call("GET", "/v1/activities/summary", params=params, answer=out.SummaryOut)
        )

    def ingest(
        self,
        title: str,
        text: str,
        scope: str = "sentence",
        source: str | None = None,
        key: str | None = None,
    ) -> R:
        """Cut a document into sentences (or windows) and link the concepts within each."""
        body = keyed({"title": title, "text": text, "scope": scope, "source": source, "key": key})
        return self._send(Call("POST", "/v1/documents", body, keyed=True, answer=out.IngestedOut))

    def feedback(
        self,
        ids: list[str],
        outcome: float,
        concepts: list[str] | None = None,
        text: str | None = None,
        key: str | None = None,
    ) -> R:
        """Rate the memories an answer used, -1 to 1, for the question's concepts (or text)."""
        body = {"ids": ids, "outcome": outcome, "concepts": concepts, "text": text, "key": key}
        return self._send(
            Call("POST", "/v1/feedback", keyed(body), keyed=True, answer=out.RatedOut)
        )

    # History

    def audit_link(self, source: str, target: str) -> R:
        params = {"source": source, "target": target}
        return self._send(Call("GET", "/v1/audit/link", params=params, answer=out.LinkAuditOut))

    def audit_memory(self, memory_id: str) -> R:
        path = f"/v1/audit/memory/{_quoted(memory_id)}"
        return self._send(Call("GET", path, answer=out.MemoryAuditOut))

    def replay(self, until: str | None = None) -> R:
        params = given({"until": until or None}) or None
        return self._send(Call("GET", "/v1/replay", params=params, answer=out.VerificationOut))

    def start_replay(self, until: str | None = None) -> R:
        """Queue `replay` as a job; the job (follow it with `job`)."""
        return self._send(Call("POST", "/v1/replay/jobs", {"until": until}, answer=out.Job))

    def start_audit_link(self, source: str, target: str) -> R:
        """Queue `audit_link` as a job; the job (follow it with `job`)."""
        body = {"source": source, "target": target}
        return self._send(Call("POST", "/v1/audit/link/jobs", body, answer=out.Job))

    def diff(self, first: str, second: str, limit: int | None = None) -> R:
        """Of each kind of change, the biggest `limit` (the service's default: 100)."""
        params = {"first": first, "second": second} | given({"limit": limit})
        return self._send(Call("GET", "/v1/diff", params=params, answer=out.DiffOut))

    def dead_letters(self, limit: int | None = None) -> R:
        """The oldest `limit` (the service's default: 100), and the total."""
        params = given({"limit": limit}) or None
        return self._send(Call("GET", "/v1/dead-letters", params=params, answer=out.DeadLettersOut))

    def resend_dead_letters(self) -> R:
        return self._send(Call("POST", "/v1/dead-letters/resend", answer=out.ResentOut))

    def forget(self, kind: str, value: str) -> R:
        """Queue the erasure of a user's, agent's, session's or namespace's events (or of the
        tenant); the job, whose result is the report."""
        return self._send(Call("POST", "/v1/forget", {kind: value}, answer=out.Job))

    # Jobs and maintenance

    def archive(self) -> R:
        """Queue an archive run now; the job (follow it with `job`)."""
        return self._send(Call("POST", "/v1/archive", changes_nothing=True, answer=out.Job))

    def export_events(
        self,
        user: str | None = None,
        session: str | None = None,
        namespace: str | None = None,
        since: str | None = None,
    ) -> R:
        """The tenant's events (an admin key's), oldest first, each {position, event}: of a
        user, a session or a namespace, at or after `since` (a position or an ISO time)."""
        params = given({"user": user, "session": session, "namespace": namespace, "since": since})
        return self._send(Call("GET", "/v1/export", params=params))

    def import_events(self, lines: list[dict[str, Any]]) -> R:
        """Append up to 1,000 lines of an export (an admin key's): at their own positions
        where they all come after the log's end, else anew, never twice."""
        body = {"events": lines}
        return self._send(Call("POST", "/v1/import", body, answer=out.ImportedOut))

    def expire(self) -> R:
        """Queue an expiry pass now (it also runs nightly): the memories past their
        `expires_at` erased for real; the job (follow it with `job`)."""
        return self._send(Call("POST", "/v1/expire", changes_nothing=True, answer=out.Job))

    def segments(self) -> R:
        return self._send(Call("GET", "/v1/archive", answer=out.ArchiveOut))

    def consolidate(self, dry_run: bool = False) -> R:
        """Queue a sleep consolidation now; the job (follow it with `job`)."""
        return self._send(Call("POST", "/v1/consolidate", {"dry_run": dry_run}, answer=out.Job))

    def jobs(self) -> R:
        return self._send(Call("GET", "/v1/jobs", answer=out.JobsOut))

    def job(self, job_id: str) -> R:
        return self._send(Call("GET", f"/v1/jobs/{_quoted(job_id)}", answer=out.Job))

    def requeue_job(self, job_id: str) -> R:
        path = f"/v1/jobs/{_quoted(job_id)}/requeue"
        return self._send(Call("POST", path, changes_nothing=True, answer=out.Job))

    # API keys

    def create_key(
        self,
        agent: str,
        tenant: str | None = None,
        permissions: list[str] | None = None,
        operator: bool = False,
        user: str | None = None,
        session: str | None = None,
        namespace: str | None = None,
    ) -> R:
        """A key for `agent`; `user`, `session`, `namespace` pin it to that scope (its
        requests act as it whatever their headers say)."""
        body = {"agent": agent, "operator": operator}
        body |= given({"tenant": tenant, "permissions": permissions})
        body |= given({"user": user, "session": session, "namespace": namespace})
        return self._send(Call("POST", "/v1/keys", body))

    def keys(self) -> R:
        return self._send(Call("GET", "/v1/keys"))

    def rotate_key(self, key_id: str) -> R:
        """A new key in place of `key_id` (same tenant, agent, permissions, pins), made
        before the old one is revoked; the answer's `key` is the new secret."""
        return self._send(Call("POST", f"/v1/keys/{_quoted(key_id)}/rotate"))

    def revoke_key(self, key_id: str) -> R:
        return self._send(Call("DELETE", f"/v1/keys/{_quoted(key_id)}"))
