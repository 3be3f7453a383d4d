"""LangGraph's `BaseStore` on assocmem: a graph's long-term memory store, sync and async.

    from assocmem.integrations.langgraph import AssocmemStore

    store = AssocmemStore(user_at=1)          # ("memories", user_id): user_id is the scope
    graph = builder.compile(store=store)

An item is a memory: its text is the value as JSON (so its words are concepts, found by a
search's `query` as any memory is, associations included), its namespace, key and the
value's top-level scalar fields are kept in its metadata (`lg_ns`, `lg_key`, `v.<field>`),
so `get`, prefix searches and `filter` are exact. Putting a key again writes a new version
that supersedes the old one (the history keeps it); putting None deletes it.

Namespaces map to scopes: with `user_at=N`, a namespace's N-th label is the assocmem user
the item is about, so one user's items, links and feedback never reach another's reads
(a search whose prefix stops before that label runs with the store's own client, and sees
what its key sees). TTLs are not kept (`supports_ttl` is False)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from assocmem.api.client import Client
from assocmem.api.errors import BadRequest
from assocmem.integrations.scoped import Scoped

SEPARATOR = "."
"""Joins a namespace's labels (LangGraph refuses labels that hold a period)."""
PREFIXES = 8
"""Namespace prefixes kept in the metadata (`lg_p1` ... `lg_p8`): a search by a longer
prefix filters by the eighth and checks the rest here."""
OPERATORS = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
VALUE = "v."
"""Prefix of a value's field in the metadata."""
FIELDS_KEPT = 20
"""Top-level scalar fields of a value kept for filters (metadata holds 32 keys)."""
TEXT_KEPT = 1000
PAGE = 1000


class AssocmemStore(BaseStore):
    supports_ttl = False

    def __init__(self, client: Client | None = None, *, user_at: int | None = None) -> None:
        """`client`: an assocmem Client (default: the local `assocmem up`, or ASSOCMEM_URL
        and ASSOCMEM_API_KEY); `user_at`: the index of the namespace label that names the
        user an item is about (None: every item in the client's own scope)."""
        self._clients = Scoped(client or Client())
        self.user_at = user_at

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The same operations off the event loop: the client blocks."""
        return await asyncio.to_thread(self.batch, list(ops))

    def close(self) -> None:
        self._clients.close()

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = self._find(op.namespace, op.key)
            return None if found is None else _item(found, Item)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise ValueError(f"unknown operation {type(op).__name__}")

    def _client(self, namespace: tuple[str, ...]) -> Client:
        at = self.user_at
        user = namespace[at] if at is not None and len(namespace) > at else None
        return self._clients.client(user=user)

    def _find(self, namespace: tuple[str, ...], key: str) -> dict[str, Any] | None:
        where = {"lg_ns": SEPARATOR.join(namespace), "lg_key": key}
        found = self._client(namespace).list_memories(kind="memory", filters=where, limit=1)
        return found["memories"][0] if found["memories"] else None

    def _put(self, op: PutOp) -> None:
        client = self._client(op.namespace)
        old = self._find(op.namespace, op.key)
        if op.value is None:
            if old is not None:
                client.delete_memory(old["id"])
            return
        text = json.dumps(op.value, ensure_ascii=False, sort_keys=True, default=str)
        created = old["metadata"]["lg_created"] if old is not None else None
        metadata = _metadata(op.namespace, op.key, op.value, created)
        if old is None:
            client.write(text, metadata=metadata)
        else:
            client.update_memory(old["id"], text, metadata=metadata)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        client = self._client(op.namespace_prefix)
        where = _prefix_filter(op.namespace_prefix) | _value_filter(op.filter)
        wanted = op.offset + op.limit
        found: list[dict[str, Any]] = []
        if op.query:
            try:
                read = client.read(
                    op.query, limit=min(wanted, 1000), kinds=["memory"], filters=where
                )
                found = read["items"]
            except BadRequest as exc:
                if "content words" not in str(exc):
                    raise
        if not op.query or not found:
            found = self._every(client, where, wanted)
        found = [m for m in found if _under(m, op.namespace_prefix)]
        return [_item(m, SearchItem) for m in found[op.offset : wanted]]

    def _every(
        self, client: Client, where: dict[str, Any], wanted: int | None
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor = None
        while wanted is None or len(found) < wanted:
            page = client.list_memories(kind="memory", filters=where, cursor=cursor, limit=PAGE)
            found += page["memories"]
            cursor = page["cursor"]
            if cursor is None:
                break
        return found

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        held = {"lg_key": {"ne": ""}}  # every item this store wrote
        names = {
            tuple(m["metadata"]["lg_ns"].split(SEPARATOR))
            for m in self._every(self._clients.base, held, None)
        }
        for condition in op.match_conditions or ():
            names = {n for n in names if _matches(n, condition.match_type, tuple(condition.path))}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]


def _metadata(
    namespace: tuple[str, ...], key: str, value: dict[str, Any], created: float | None
) -> dict[str, Any]:
    joined = SEPARATOR.join(namespace)
    kept: dict[str, Any] = {"lg_ns": joined, "lg_key": key}
    kept["lg_created"] = created if created is not None else datetime.now(UTC).timestamp()
    for depth in range(1, min(len(namespace), PREFIXES) + 1):
        kept[f"lg_p{depth}"] = SEPARATOR.join(namespace[:depth])
    fields = 0
    for field, item in value.items():
        if fields == FIELDS_KEPT:
            break
        if isinstance(item, bool | int | float) or (
            isinstance(item, str) and len(item) <= TEXT_KEPT
        ):
            if len(VALUE + field) <= 64 and field.strip() == field and field:
                kept[VALUE + field] = item
                fields += 1
    return kept


def _prefix_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    if not prefix:
        return {"lg_key": {"ne": ""}}
    depth = min(len(prefix), PREFIXES)
    return {f"lg_p{depth}": SEPARATOR.join(prefix[:depth])}


def _value_filter(given: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for field, test in (given or {}).items():
        if isinstance(test, dict):
            unknown = set(test) - set(OPERATORS)
            if unknown:
                raise ValueError(
                    f"filter {field!r} has {sorted(unknown)}: expected {sorted(OPERATORS)}"
                )
            found[VALUE + field] = {OPERATORS[op]: value for op, value in test.items()}
        else:
            found[VALUE + field] = test
    return found


def _under(memory: dict[str, Any], prefix: tuple[str, ...]) -> bool:
    names = tuple(memory["metadata"]["lg_ns"].split(SEPARATOR))
    return names[: len(prefix)] == prefix


def _matches(names: tuple[str, ...], kind: str, path: tuple[str, ...]) -> bool:
    part = names[: len(path)] if kind == "prefix" else names[-len(path) :] if path else ()
    return len(part) == len(path) and all(p in ("*", n) for p, n in zip(path, part, strict=True))


def _item(memory: dict[str, Any], kind: type[Item]) -> Any:
    metadata = memory["metadata"]
    created = datetime.fromtimestamp(metadata["lg_created"], UTC)
    updated = datetime.fromtimestamp(memory["ts"], UTC)
    fields = {
        "value": json.loads(memory["text"]),
        "key": metadata["lg_key"],
        "namespace": tuple(metadata["lg_ns"].split(SEPARATOR)),
        "created_at": created,
        "updated_at": updated,
    }
    if kind is SearchItem:
        fields["score"] = memory.get("score")
    return kind(**fields)
