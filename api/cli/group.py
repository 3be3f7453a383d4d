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
    module, the HTTP client's among them, a tenth of a second of `up` and again of `serve`.
    `found_in`: modules of this package whose top-level commands are found there when a
    command that is not lazy is asked for, so that a new command needs no entry here."""

    def __init__(
        self,
        *args: Any,
        lazy: dict[str, str] | None = None,
        found_in: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        self.found_in = found_in
        self._found = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._find()
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.lazy and name not in self.commands:
            self._find()
        if name not in self.lazy or name in self.commands:
            return super().get_command(ctx, name)
        module, attribute = self.lazy[name].rsplit(".", 1)
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        if not isinstance(command, click.Command) or command.name != name:
            raise RuntimeError(f"{self.lazy[name]} is not the command {name!r}")
        self.add_command(command)
        return command

    def _find(self) -> None:
        """Every command defined at the top of the `found_in` modules (a group's own
        subcommands stay in their group)."""
        if self._found:
            return
        self._found = True
        for module in self.found_in:
            members = vars(importlib.import_module(f"{__package__}.{module}")).values()
            commands = [m for m in members if isinstance(m, click.Command)]
            grouped = {
                id(sub)
                for g in commands
                if isinstance(g, click.Group)
                for sub in g.commands.values()
            }
            for command in commands:
                if id(command) not in grouped and command.name not in self.lazy:
                    self.add_command(command)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ApiError, StoreError) as exc:
            raise click.ClickException(str(exc)) from exc
