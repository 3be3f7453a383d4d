"""API keys: create one for an agent, list them, revoke one; bootstrap the first operator
key of a deployment without `up`."""

from __future__ import annotations

import functools
import os
from typing import Any

import click

from assocmem.api.cli.common import client_of, common, emit, remember, split
from assocmem.api.client.local import KEY_FILE, local_home, read_key_file
from assocmem.api.ops.run_file import write_key_file
from assocmem.engine.principal import AGENT_PERMISSIONS, PERMISSIONS
from assocmem.workers.runtime.settings import load_settings


@click.group(epilog="Example: assocmem keys create --tenant acme --agent planner")
def keys() -> None:
    """API keys. Every request's tenant and agent come from its key, never from a body, a
    query or a tool argument. A key holds permissions: read (read, chain, graph,
    activities, state, audits, replays), write (memories, activities, documents,
    importance), feedback (rating answers), admin (jobs, consolidation, archive, dead
    letters, the tenant's keys). Only a key's SHA-256 is stored: a lost key is revoked and
    replaced, never recovered."""


def _line(key: dict[str, Any]) -> str:
    flags = " operator" if key["operator"] else ""
    return (
        f"{key['id']}  tenant {key['tenant']}  agent {key['agent']}"
        f"  {','.join(key['permissions'])}{flags}"
    )


@keys.command(
    "create",
    epilog="Example: assocmem keys create --tenant acme --agent planner --permissions read,write",
)
@click.option("--agent", required=True, help="The agent every request with the key acts as.")
@click.option("--tenant", help="The tenant it acts for [default: your key's].")
@click.option(
    "--permissions",
    default=",".join(AGENT_PERMISSIONS),
    show_default=True,
    help=f"Comma-separated, of {', '.join(PERMISSIONS)}.",
)
@click.option("--operator", is_flag=True, help="May manage every tenant's keys.")
@click.option(
    "--user",
    help="Pin the key to this user: its requests are about that user and see that user's"
    " memories and the shared ones only, whatever they send (not with admin).",
)
@click.option("--session", help="Pin the key to this session.")
@click.option("--namespace", help="Pin the key to this namespace.")
@functools.partial(common, scoped=False)
@click.pass_context
def create(
    ctx: click.Context,
    agent: str,
    tenant: str | None,
    permissions: str,
    operator: bool,
    user: str | None,
    session: str | None,
    namespace: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Create a key and print it once (--json: as `key`). Needs an admin key of the tenant, or
    an operator key for another tenant."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        made = client.create_key(
            agent, tenant, split(permissions) or [], operator, user, session, namespace
        )
    emit(ctx, made, lambda k: f"{k['key']}\n{_line(k)}\nshown once: store it now")


@keys.command("list", epilog="Example: assocmem keys list --json")
@common
@click.pass_context
def list_keys(ctx: click.Context, url: str | None, as_json: bool) -> None:
    """The keys of your tenant (every tenant's with an operator key), without their secrets."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        found = client.keys()
    emit(ctx, found, lambda r: "\n".join(_line(k) for k in r["keys"]) or "no keys")


@keys.command("revoke", epilog="Example: assocmem keys revoke 3f9a0c1d2e4b")
@click.argument("key_id")
@common
@click.pass_context
def revoke(ctx: click.Context, key_id: str, url: str | None, as_json: bool) -> None:
    """Revoke a key by its id (keys list): every API replica refuses it within a second."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        gone = client.revoke_key(key_id)
    emit(ctx, gone, lambda k: f"revoked {_line(k)}")


@keys.command("rotate", epilog="Example: assocmem keys rotate 3f9a0c1d2e4b")
@click.argument("key_id")
@common
@click.pass_context
def rotate(ctx: click.Context, key_id: str, url: str | None, as_json: bool) -> None:
    """Replace a key by a new one with the same tenant, agent, permissions and pins, and
    print the new secret once; the old one is refused from then on. The new key is made
    before the old is revoked, so the last operator key rotates safely. Rotating the key the
    local `up` keeps (ASSOCMEM_HOME/api-key) writes the new one there."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        made = client.rotate_key(key_id)
        used = client.api_key
    home = local_home()
    kept = read_key_file(home) if home.exists() else None
    if kept is not None and kept == used and f"_{key_id}_" in kept:
        write_key_file(home, made["key"])
        click.echo(f"the key in {home / KEY_FILE} is the new one", err=True)
    emit(
        ctx,
        made,
        lambda k: f"{k['key']}\n{_line(k)}\nshown once: store it now (the old key is revoked)",
    )


@keys.command(
    "bootstrap",
    epilog="Example: REDIS_URL=redis://:secret@redis:6379/0 assocmem keys bootstrap > operator.key",
)
@click.option("--tenant", default="default", show_default=True, help="The operator's tenant.")
def bootstrap(tenant: str) -> None:
    """Make an operator key straight in Redis and print it: the first key of a deployment run
    without `up` (which makes its own). Needs REDIS_URL; keep the key secret."""
    from assocmem.workers.app.key_commands import KeyCommands
    from assocmem.workers.runtime.services import Runtime
    from assocmem.workers.store.redis.keys import check_tenant

    try:
        check_tenant(tenant)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tenant") from None
    runtime = Runtime.connect(load_settings(os.environ))
    try:
        click.echo(KeyCommands(runtime).bootstrap(tenant))
    finally:
        runtime.close()
