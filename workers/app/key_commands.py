"""Creating, listing, revoking and checking API keys: who may manage whose keys.

A key manages the keys of its own tenant if it has the admin permission; an operator key
(the one `assocmem up` makes on first start, or `assocmem keys bootstrap`) those of every
tenant. Checks are cached for AUTH_CACHE_SECONDS, so a revoked key is refused by every
replica within that time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from assocmem.engine.principal import ADMIN, PERMISSIONS, Principal
from assocmem.workers.app.permissions import require
from assocmem.workers.errors import InvalidRequest, LastOperatorKey, NotAllowed
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.store.redis.api_keys import (
    ApiKey,
    checked_key,
    checked_pins,
    digest,
    new_secret,
)

AUTH_CACHE_SECONDS = 0.5
"""How long one process trusts a key check: a revocation reaches every replica within it."""
AUTH_CACHE_SIZE = 10_000
OPERATOR_AGENT = "operator"


class KeyCommands:
    def __init__(self, runtime: Runtime, clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.clock = clock
        self._checked: dict[str, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()

    def create(
        self,
        principal: Principal,
        tenant: str,
        agent: str,
        permissions: list[str] | tuple[str, ...],
        operator: bool = False,
        pins: tuple[str | None, str | None, str | None] = (None, None, None),
    ) -> tuple[ApiKey, str]:
        """A new key and its secret, which is shown this once; `pins`: the user, session and
        namespace it is pinned to (None: not pinned)."""
        require(principal, ADMIN)
        if operator and not principal.operator:
            raise NotAllowed("only an operator key creates operator keys")
        self._check_manages(principal, tenant)
        tenant, agent, permissions = checked_key(tenant, agent, permissions)
        checked_pins(pins, permissions, operator)
        return self._create(tenant, agent, permissions, operator, pins)

    def all(self, principal: Principal) -> list[ApiKey]:
        """The tenant's keys (every tenant's for an operator), oldest first; never a secret."""
        require(principal, ADMIN)
        return [
            k for k in self.runtime.keys.all() if principal.operator or k.tenant == principal.tenant
        ]

    def rotate(self, principal: Principal, key_id: str) -> tuple[ApiKey, str]:
        """A new key with everything of `key_id` but its secret, made before the old one is
        revoked: so rotating the last operator key never leaves the pipeline without one."""
        require(principal, ADMIN)
        found = [k for k in self.all(principal) if k.id == key_id]
        if not found:
            raise InvalidRequest(
                f"key {key_id!r} is unknown: expected an id `assocmem keys list` shows"
            )
        old = found[0]
        if old.operator and not principal.operator:
            raise NotAllowed("only an operator key rotates operator keys")
        made = self._create(old.tenant, old.agent, old.permissions, old.operator, old.pins)
        self.runtime.keys.remove(key_id)
        with self._lock:
            self._checked.clear()
        return made

    def revoke(self, principal: Principal, key_id: str) -> ApiKey:
        require(principal, ADMIN)
        found = [k for k in self.all(principal) if k.id == key_id]
        if not found:
            raise InvalidRequest(
                f"key {key_id!r} is unknown: expected an id `assocmem keys list` shows"
            )
        if _manages_keys(found[0]) and not any(
            _manages_keys(k) and k.id != key_id for k in self.runtime.keys.all()
        ):
            raise LastOperatorKey(
                f"key {key_id!r} is the last operator key: revoked, every call would be refused"
                " until `assocmem keys bootstrap` against Redis; create another first"
                " (`assocmem keys create --operator`), then revoke this one"
            )
        removed = self.runtime.keys.remove(key_id) or found[0]
        with self._lock:
            self._checked.clear()
        return removed

    def authenticate(self, secret: str) -> Principal | None:
        """The principal of a key, or None if no key has this secret (or it was revoked)."""
        hashed = digest(secret)
        now = time.monotonic()
        cached = self._checked.get(hashed)
        if cached is not None and cached[0] > now:
            return cached[1]
        key = self.runtime.keys.find(hashed)
        principal = key.principal() if key is not None else None
        with self._lock:
            if len(self._checked) >= AUTH_CACHE_SIZE:
                self._checked.clear()
            self._checked[hashed] = (now + AUTH_CACHE_SECONDS, principal)
        return principal

    @staticmethod
    def require_operator(principal: Principal) -> None:
        """For what spans every tenant (metrics name them all)."""
        if not principal.operator:
            raise NotAllowed(f"the key of agent {principal.agent!r} is not an operator key")

    def bootstrap(self, tenant: str) -> str:
        """A new operator key with every permission, for whoever runs the pipeline."""
        return self._create(tenant, OPERATOR_AGENT, PERMISSIONS, operator=True)[1]

    def _create(
        self,
        tenant: str,
        agent: str,
        permissions: tuple[str, ...],
        operator: bool,
        pins: tuple[str | None, str | None, str | None] = (None, None, None),
    ) -> tuple[ApiKey, str]:
        key_id, secret = new_secret()
        key = ApiKey(key_id, tenant, agent, permissions, operator, self.clock(), *pins)
        self.runtime.keys.add(key, digest(secret))
        return key, secret

    @staticmethod
    def _check_manages(principal: Principal, tenant: str) -> None:
        if tenant != principal.tenant and not principal.operator:
            raise NotAllowed(
                f"the key of agent {principal.agent!r} manages the keys of tenant"
                f" {principal.tenant!r} only"
            )


def _manages_keys(key: ApiKey) -> bool:
    """An operator key that may manage keys (admin): every tenant's keys, operators' too."""
    return key.operator and ADMIN in key.permissions
