"""API keys made straight in the store, as `assocmem keys bootstrap` does, for tests that
talk to the HTTP API."""

from __future__ import annotations

from assocmem.engine.principal import Principal
from assocmem.workers.app.key_commands import KeyCommands
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings


def operator_key(settings: Settings) -> str:
    """An operator key of the settings' tenant, with every permission."""
    runtime = Runtime.connect(settings)
    try:
        return KeyCommands(runtime).bootstrap(settings.tenant)
    finally:
        runtime.close()


def key_for(
    settings: Settings,
    tenant: str,
    agent: str = "agent",
    permissions: tuple[str, ...] = ("read", "write", "feedback"),
) -> str:
    runtime = Runtime.connect(settings)
    try:
        operator = Principal(settings.tenant, "operator", operator=True)
        return KeyCommands(runtime).create(operator, tenant, agent, permissions)[1]
    finally:
        runtime.close()


def bearer(secret: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}"}
