"""What every command shares: the client, output (text or --json), options and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
import orjson

from assocmem.api.client.local import local_home, local_url, read_key_file
from assocmem.api.client.sync import SCOPES, Client
from assocmem.api.errors import ApiError


def split(value: str | None) -> list[str] | None:
    return [part.strip() for part in value.split(",") if part.strip()] if value else None


def client_of(ctx: click.Context, degrade_after: float | None = None) -> Client:
    home = local_home()
    key = ctx.obj.get("api_key") or read_key_file(home)
    if key is None and not ctx.obj.get("url"):  # away from `up`: not its key, nor its URL
        raise click.ClickException(
            f"no API key: none given (--api-key, ASSOCMEM_API_KEY) and none in {home}/api-key;"
            " run this where `assocmem up` runs (it keeps its operator key there), or set"
            " ASSOCMEM_HOME to its data directory"
        )
    client = Client(
        ctx.obj.get("url") or local_url(home),
        api_key=key,
        degrade_after=degrade_after,
        scope={name: ctx.obj[name] for name in SCOPES if ctx.obj.get(name)},
    )
    client.on_wait = _waiting
    return client


def _waiting(answer: ApiError) -> None:
    """A read of a rebuilt state is asked again: how far the rebuild has come, on stderr
    (stdout is for the answer)."""
    click.echo(f"waiting: {answer}", err=True)


def emit(ctx: click.Context, response: Any, human: Callable[[Any], str]) -> None:
    if ctx.obj.get("json"):
        click.echo(orjson.dumps(response, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(human(response))


def _keep(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    assert param.name is not None
    ctx.ensure_object(dict)[param.name] = value


def common(func: Callable[..., Any], scoped: bool = True) -> Callable[..., Any]:
    """--json, --url, --api-key and (`scoped`) --user, --session, --namespace."""
    func = click.option("--json", "as_json", is_flag=True, help="Print the API's JSON response.")(
        func
    )
    scopes = [
        ("namespace", "A partition of the tenant (a project, a team)"),
        ("session", "The conversation or run"),
        ("user", "Whom the request is about"),
    ]
    for name, what in scopes if scoped else []:
        func = click.option(
            f"--{name}",
            envvar=f"ASSOCMEM_{name.upper()}",
            expose_value=False,
            callback=_keep,
            help=f"{what}: set on the events a command appends; a read sees its memories and"
            f" the shared ones only [env ASSOCMEM_{name.upper()}].",
        )(func)
    func = click.option(
        "--api-key",
        envvar="ASSOCMEM_API_KEY",
        expose_value=False,
        callback=_keep,
        help="API key [env ASSOCMEM_API_KEY; default: the one the local `up` made, in"
        " ASSOCMEM_HOME/api-key].",
    )(func)
    func = click.option(
        "--url",
        envvar="ASSOCMEM_URL",
        help="Service URL [env ASSOCMEM_URL; default: the local `up`'s].",
    )(func)
    return func


AFTER = click.option(
    "--after",
    help="Answer from a state that includes this position (one a write printed), e.g. a write"
    " made through another API replica.",
)


def remember(ctx: click.Context, url: str | None, as_json: bool) -> None:
    ctx.ensure_object(dict)
    ctx.obj.update(url=url, json=as_json)
