"""The one check of what a caller's key allows; every command and query of the application
makes it first."""

from __future__ import annotations

from assocmem.engine.principal import Principal
from assocmem.workers.errors import NotAllowed


def require(principal: Principal, permission: str) -> None:
    if not principal.may(permission):
        raise NotAllowed(
            f"the key of agent {principal.agent!r} lacks the {permission!r} permission"
            f" (it has: {', '.join(sorted(principal.permissions)) or 'none'})"
        )
