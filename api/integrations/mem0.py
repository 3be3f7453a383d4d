"""Mem0's `Memory`, on assocmem: the same methods and arguments, so a Mem0 user switches
with one import:

    from assocmem.integrations.mem0 import Memory   # was: from mem0 import Memory

    m = Memory()                                     # the local `assocmem up`, or a Client
    m.add("I moved to Lisbon in May", user_id="alice", metadata={"topic": "home"})
    m.search("where does alice live", filters={"user_id": "alice"})

`user_id` is assocmem's user scope and `run_id` its session: a read sees the memories of the
user it names, as Mem0's do. `agent_id` is kept in the metadata (assocmem's agent is the API
key's, never a caller's word) and filters like any key. `filters` take Mem0's shape (eq,
in, nin, ne, gt, gte, lt, lte, one level of AND / OR). What Mem0 does with an LLM (`infer`:
extracting facts from messages, deciding ADD / UPDATE / DELETE) is not done: every message
is stored as said, and assocmem's links and feedback do the associating. Results say how
each memory was found (`source`, and the `via` path for an association)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assocmem.api.client import Client
from assocmem.api.errors import NotFound
from assocmem.integrations.scoped import Scoped

SCOPE_KEYS = {"user_id": "user", "run_id": "session"}
"""Mem0's entity ids that are assocmem scopes; `agent_id` is metadata."""
PAGE = 1000


class Memory:
    def __init__(self, client: Client | None = None) -> None:
        """`client`: an assocmem Client; by default one for the local `assocmem up` (or
        ASSOCMEM_URL and ASSOCMEM_API_KEY)."""
        self._clients = Scoped(client or Client())

    @classmethod
    def from_config(cls, config_dict: dict[str, Any] | None = None) -> Memory:
        """Mem0's constructor from a config: `{"url": ..., "api_key": ...}` here (Mem0's
        vector store, LLM and embedder settings have no meaning for assocmem)."""
        config = config_dict or {}
        return cls(Client(config.get("url"), api_key=config.get("api_key")))

    def add(
        self,
        messages: str | dict[str, Any] | list[dict[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: float | None = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Store each message (a string, a {"role", "content"} dict, or a list of them) as a
        memory, at `timestamp` (unix seconds; default now); returns {"results": [{"id",
        "memory", "event": "ADD"}]}. `infer`, `memory_type` and `prompt` (Mem0's LLM
        extraction) are accepted and not used; an `expiration_date` is refused (assocmem
        has no expiry yet)."""
        _no_expiry(expiration_date)
        client = self._client(user_id, run_id)
        extra = dict(metadata or {}) | ({"agent_id": agent_id} if agent_id else {})
        items = []
        for text, role in _messages(messages):
            fields = extra | ({"role": role} if role else {})
            item = {"text": text} | ({"metadata": fields} if fields else {})
            items.append(item | ({"ts": float(timestamp)} if timestamp is not None else {}))
        written = client.write_many(items) if items else []
        return {
            "results": [
                {"id": w["id"], "memory": item["text"], "event": "ADD"}
                for w, item in zip(written, items, strict=True)
            ]
        }

    def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The `top_k` memories that best answer `query`, within the user and run `filters`
        name (or the entity ids given as keyword arguments, as older Mem0 took them), each
        with its score and how it was found; `threshold` drops scores below it."""
        scope, rest = _split(filters, kwargs)
        found = self._client(*scope).read(query, limit=top_k, filters=rest or None)
        results = [_result(item) for item in found["items"]]
        if threshold is not None:
            results = [r for r in results if r["score"] >= threshold]
        return {"results": results}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by its id; None if there is none (or it was deleted)."""
        try:
            return _result(self._clients.base.get_memory(memory_id))
        except NotFound:
            return None

    def get_all(
        self, *, filters: dict[str, Any] | None = None, top_k: int = 20, **kwargs: Any
    ) -> dict[str, Any]:
        """Up to `top_k` memories of the user and run `filters` name, newest first."""
        scope, rest = _split(filters, kwargs)
        client = self._client(*scope)
        user, run = scope
        page = client.list_memories(
            user=user, session=run, kind="memory", filters=rest or None, limit=min(top_k, PAGE)
        )
        return {"results": [_result(m) for m in page["memories"]]}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = None,
        data: str | None = None,
    ) -> dict[str, Any]:
        """A new version of the memory (it supersedes the old one, which its history keeps);
        its metadata is kept unless `metadata` is given. Mem0's `data` is `text`."""
        _no_expiry(expiration_date)
        old = self._clients.base.get_memory(memory_id)
        scoped = self._client(old.get("user"), old.get("session"))
        kept = metadata if metadata is not None else old.get("metadata")
        written = scoped.update_memory(memory_id, text or data or old["text"], metadata=kept)
        return {"message": "Memory updated successfully!", "id": written["id"]}

    def delete(self, memory_id: str) -> dict[str, Any]:
        self._clients.base.delete_memory(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Delete every memory of the user, agent and run named (one of them at least)."""
        if not (user_id or agent_id or run_id):
            raise ValueError("delete_all needs user_id, agent_id or run_id: it deletes theirs")
        client = self._client(user_id, run_id)
        rest = {"agent_id": agent_id} if agent_id else None
        for memory in _every(client, user_id, run_id, rest):
            client.delete_memory(memory["id"])
        return {"message": "Memories deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """What happened to the memory, oldest first: its write, ratings, accesses,
        supersession and deletion, each with its event and time."""
        audit = self._clients.base.audit_memory(memory_id)
        return [
            {
                "id": event["position"],
                "memory_id": memory_id,
                "event": event["type"],
                "created_at": event["ts"],
                "detail": event["detail"],
            }
            for event in audit["events"]
        ]

    def reset(self) -> None:
        raise NotImplementedError(
            "reset would delete every memory of the tenant: use `assocmem forget --tenant`"
        )

    def close(self) -> None:
        self._clients.close()

    def _client(self, user: str | None, run: str | None) -> Client:
        return self._clients.client(user=user, session=run)


def _no_expiry(expiration_date: Any) -> None:
    if expiration_date is not None:
        raise NotImplementedError("expiration_date: assocmem keeps memories until deleted")


def _messages(
    messages: str | dict[str, Any] | list[dict[str, Any]],
) -> Iterator[tuple[str, str | None]]:
    if isinstance(messages, str):
        yield messages, None
        return
    for message in [messages] if isinstance(messages, dict) else messages:
        content = message.get("content")
        if isinstance(content, str) and content.strip() and message.get("role") != "system":
            yield content, message.get("role")


def _split(
    filters: dict[str, Any] | None, entities: dict[str, Any]
) -> tuple[tuple[str | None, str | None], dict[str, Any]]:
    """(user, run) and the other conditions, with `agent_id` among them as metadata."""
    given = dict(filters or {}) | {
        k: v for k, v in entities.items() if k in (*SCOPE_KEYS, "agent_id")
    }
    user, run = given.pop("user_id", None), given.pop("run_id", None)
    return (user, run), given


def _every(
    client: Client, user: str | None, run: str | None, filters: dict[str, Any] | None
) -> Iterator[dict[str, Any]]:
    cursor = None
    while True:
        page = client.list_memories(
            user=user, session=run, kind="memory", filters=filters, cursor=cursor, limit=PAGE
        )
        yield from page["memories"]
        cursor = page["cursor"]
        if cursor is None:
            return


def _result(item: dict[str, Any]) -> dict[str, Any]:
    metadata = dict(item.get("metadata") or {})
    found = {
        "id": item["id"],
        "memory": item["text"],
        "metadata": metadata,
        "created_at": item.get("ts"),
        "user_id": item.get("user"),
        "agent_id": metadata.get("agent_id"),
        "run_id": item.get("session"),
    }
    if "score" in item:
        found |= {"score": item["score"], "source": item["source"], "via": item.get("via", [])}
    return found
