"""The routes of API keys: create (the secret is shown once), list, revoke."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Request
from pydantic import BaseModel, Field

from assocmem.api.http.principal import Caller
from assocmem.api.http.schemas import Strict
from assocmem.engine.principal import AGENT_PERMISSIONS, PERMISSIONS
from assocmem.workers.store.redis.api_keys import SCOPE_PATTERN, ApiKey
from assocmem.workers.store.redis.keys import TENANT_PATTERN


class KeyIn(Strict):
    agent: str = Field(
        min_length=1,
        max_length=100,
        description="The agent every request with the key acts as (events carry it).",
    )
    tenant: str | None = Field(
        None,
        pattern=TENANT_PATTERN,
        description="The tenant the key acts for; the caller's own when absent (another"
        " tenant needs an operator key).",
    )
    permissions: list[str] = Field(
        list(AGENT_PERMISSIONS),
        min_length=1,
        max_length=len(PERMISSIONS),
        description=f"Any of {', '.join(PERMISSIONS)}.",
    )
    operator: bool = Field(
        False, description="May manage the keys of every tenant (an operator key only)."
    )
    user: str | None = Field(
        None,
        pattern=SCOPE_PATTERN,
        description="Pin the key to this user: every request with it is about that user, and"
        " sees that user's memories and the shared ones only (a header naming another is a"
        " 403). A pinned key is no admin.",
    )
    session: str | None = Field(
        None, pattern=SCOPE_PATTERN, description="Pin the key to this session."
    )
    namespace: str | None = Field(
        None, pattern=SCOPE_PATTERN, description="Pin the key to this namespace."
    )


class KeyOut(BaseModel):
    id: str
    tenant: str
    agent: str
    permissions: list[str]
    operator: bool
    created: float
    user: str | None = None
    session: str | None = None
    namespace: str | None = None


class CreatedKeyOut(KeyOut):
    key: str = Field(description="The secret: shown this once, stored only as its SHA-256.")


class KeysOut(BaseModel):
    keys: list[KeyOut]


KeyId = Annotated[str, Path(pattern=r"^[0-9a-f]{12}$", description="A key's id (keys list)")]


def _keys(request: Request) -> Any:
    return request.app.state.application.keys


def key_view(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "tenant": key.tenant,
        "agent": key.agent,
        "permissions": list(key.permissions),
        "operator": key.operator,
        "created": key.created,
    } | {k: v for k, v in zip(("user", "session", "namespace"), key.pins, strict=True) if v}


def create_key(body: KeyIn, request: Request, caller: Caller) -> dict[str, Any]:
    """Create a key bound to a tenant, an agent and permissions; the answer carries its secret
    (`key`), which is never shown again."""
    tenant = body.tenant if body.tenant is not None else caller.tenant
    pins = (body.user, body.session, body.namespace)
    key, secret = _keys(request).create(
        caller, tenant, body.agent, body.permissions, body.operator, pins
    )
    return {**key_view(key), "key": secret}


def list_keys(request: Request, caller: Caller) -> dict[str, Any]:
    """The tenant's keys (every tenant's for an operator key), oldest first, without secrets."""
    return {"keys": [key_view(k) for k in _keys(request).all(caller)]}


def rotate_key(key_id: KeyId, request: Request, caller: Caller) -> dict[str, Any]:
    """Replace a key by a new one with the same tenant, agent, permissions and pins: the new
    one exists before the old one is revoked (so the last operator key rotates safely); the
    answer carries the new secret (`key`), shown this once."""
    key, secret = _keys(request).rotate(caller, key_id)
    return {**key_view(key), "key": secret}


def revoke_key(key_id: KeyId, request: Request, caller: Caller) -> dict[str, Any]:
    """Revoke a key: every replica refuses it within a second."""
    return key_view(_keys(request).revoke(caller, key_id))


ROUTES = [
    ("/v1/keys", create_key, "POST", 201, CreatedKeyOut),
    ("/v1/keys", list_keys, "GET", 200, KeysOut),
    ("/v1/keys/{key_id}", revoke_key, "DELETE", 200, KeyOut),
    ("/v1/keys/{key_id}/rotate", rotate_key, "POST", 201, CreatedKeyOut),
]
