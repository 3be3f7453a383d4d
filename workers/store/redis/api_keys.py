"""API keys: a secret handed out once, stored only as its SHA-256 digest, bound to a tenant,
an agent and permissions. The secret carries 256 random bits, so a plain digest is enough:
a slow password hash guards guessable secrets, which these are not."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
import threading
from typing import Protocol

import orjson
import redis

from assocmem.engine.principal import PERMISSIONS, Principal
from assocmem.workers.errors import InvalidRequest
from assocmem.workers.store.redis.connect import get_many, is_cluster
from assocmem.workers.store.redis.errors import translated
from assocmem.workers.store.redis.keys import api_key_ids_key, api_key_key, check_tenant

SECRET_PREFIX = "amk"
_AGENT = re.compile(r"^[A-Za-z0-9_.:@-]{1,100}$")
SCOPE_PATTERN = r"^[\w.:@+-]{1,128}$"
"""A user, session or namespace, as the X-Assocmem-* headers and a key's pins name them."""
SCOPE_WORDS = "1 to 128 letters, digits or .:@+-_"
SCOPE = re.compile(SCOPE_PATTERN)


@dataclasses.dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    """Public: listed, and named to revoke the key; also the secret's second part."""
    tenant: str
    agent: str
    permissions: tuple[str, ...]
    operator: bool
    created: float
    user: str | None = None
    """The scope the key is pinned to (None: any the request names): a request with it acts
    as that user (session, namespace) whatever its headers say; they may narrow it only."""
    session: str | None = None
    namespace: str | None = None

    def principal(self) -> Principal:
        return Principal(
            self.tenant,
            self.agent,
            user=self.user,
            permissions=frozenset(self.permissions),
            operator=self.operator,
            key=self.id,
            session=self.session,
            namespace=self.namespace,
        )

    @property
    def pins(self) -> tuple[str | None, str | None, str | None]:
        return (self.user, self.session, self.namespace)


def new_secret() -> tuple[str, str]:
    """A fresh key id and the secret that embeds it: amk_<id>_<43 random characters>."""
    key_id = secrets.token_hex(6)
    return key_id, f"{SECRET_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def checked_key(
    tenant: str, agent: str, permissions: list[str] | tuple[str, ...]
) -> tuple[str, str, tuple[str, ...]]:
    """The key's fields, or InvalidRequest naming the bad one."""
    try:
        check_tenant(tenant)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None
    if not _AGENT.match(agent):
        raise InvalidRequest(
            f"agent {agent!r} is malformed: expected 1-100 letters, digits, '_', '.', ':', '@' or '-'"
        )
    unknown = [p for p in permissions if p not in PERMISSIONS]
    if unknown or not permissions:
        raise InvalidRequest(
            f"permissions {list(permissions)!r} are invalid: expected one or more of"
            f" {', '.join(PERMISSIONS)}"
        )
    return tenant, agent, tuple(p for p in PERMISSIONS if p in permissions)


def checked_pins(
    pins: tuple[str | None, str | None, str | None], permissions: tuple[str, ...], operator: bool
) -> None:
    """A key pinned to a scope names it as a header would, and cannot manage the tenant: an
    admin sees and erases every scope, which no boundary survives."""
    for name, value in zip(("user", "session", "namespace"), pins, strict=True):
        if value is not None and not SCOPE.fullmatch(value):
            raise InvalidRequest(f"{name} {value!r} is invalid: expected {SCOPE_WORDS}")
    if any(pins) and (operator or "admin" in permissions):
        raise InvalidRequest(
            "a key pinned to a user, session or namespace cannot be admin or operator: those"
            " see and erase every scope"
        )


class KeyStore(Protocol):
    def add(self, key: ApiKey, digest: str) -> None: ...

    def find(self, digest: str) -> ApiKey | None: ...

    def all(self) -> list[ApiKey]: ...

    def remove(self, key_id: str) -> ApiKey | None:
        """Delete the key; the key deleted, or None if no key has that id."""
        ...


class RedisKeyStore:
    def __init__(self, client: redis.Redis) -> None:
        self._client = client

    def add(self, key: ApiKey, digest: str) -> None:
        # a key's record and the id index are in two slots: on a cluster, two writes
        together = not is_cluster(self._client)
        with translated("store an API key"), self._client.pipeline(transaction=together) as pipe:
            pipe.set(api_key_key(digest), orjson.dumps(dataclasses.asdict(key)))
            pipe.hset(api_key_ids_key(), key.id, digest)
            pipe.execute()

    def find(self, digest: str) -> ApiKey | None:
        with translated("read the API keys"):
            raw = self._client.get(api_key_key(digest))
        return _decoded(raw) if raw else None

    def all(self) -> list[ApiKey]:
        with translated("list the API keys"):
            digests = self._client.hvals(api_key_ids_key())
            raws = get_many(self._client, [api_key_key(d.decode()) for d in digests])
        return sorted((_decoded(r) for r in raws if r), key=lambda k: k.created)

    def remove(self, key_id: str) -> ApiKey | None:
        with translated("revoke an API key"):
            found = self._client.hget(api_key_ids_key(), key_id)
            if found is None:
                return None
            raw = self._client.get(api_key_key(found.decode()))
            with self._client.pipeline(transaction=not is_cluster(self._client)) as pipe:
                pipe.delete(api_key_key(found.decode()))
                pipe.hdel(api_key_ids_key(), key_id)
                pipe.execute()
        return _decoded(raw) if raw else None


class InMemoryKeyStore:
    def __init__(self) -> None:
        self._by_digest: dict[str, ApiKey] = {}
        self._digests: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, key: ApiKey, digest: str) -> None:
        with self._lock:
            self._by_digest[digest] = key
            self._digests[key.id] = digest

    def find(self, digest: str) -> ApiKey | None:
        return self._by_digest.get(digest)

    def all(self) -> list[ApiKey]:
        return sorted(self._by_digest.values(), key=lambda k: k.created)

    def remove(self, key_id: str) -> ApiKey | None:
        with self._lock:
            found = self._digests.pop(key_id, None)
            return self._by_digest.pop(found, None) if found else None


def _decoded(raw: bytes) -> ApiKey:
    fields = orjson.loads(raw)
    return ApiKey(**{**fields, "permissions": tuple(fields["permissions"])})
