"""The root command group: a command typed without its group is pointed to."""

from __future__ import annotations

import click
from typer.core import TyperGroup


class Commands(TyperGroup):
    """A command that lives in a group (``askd answer`` is ``askd pending
    answer``) is named where it is, instead of only "No such command"."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and self.get_command(ctx, name) is None:
            homes = [
                f"askd {group} {name}"
                for group, cmd in self.commands.items()
                if name in getattr(cmd, "commands", {})
            ]
            if homes:
                # ctx.fail raises the usage error Typer prints, as "No such command" is.
                ctx.fail(f"No such command {name!r}. Did you mean `{' or '.join(homes)}`?")
        return super().resolve_command(ctx, args)
