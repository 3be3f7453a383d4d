"""The command group: its commands imported when they run, and what they raise said plainly."""

from __future__ import annotations

import importlib
from typing import Any

import click

from assocmem.api.errors import ApiError
from assocmem.workers.errors import StoreError


class Group(click.Group):
    """`lazy`: command name -> "module.attribute" in this package, imported on first use
    (click's "lazily loading subcommands"): starting the API imported every command's
    module, the HTTP client's among them, a tenth of a second of `up` and again of `serve`."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.lazy or name in self.commands:
            return super().get_command(ctx, name)
        module, attribute = self.lazy[name].rsplit(".", 1)
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        if not isinstance(command, click.Command) or command.name != name:
            raise RuntimeError(f"{self.lazy[name]} is not the command {name!r}")
        self.add_command(command)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ApiError, StoreError) as exc:
            raise click.ClickException(str(exc)) from exc
