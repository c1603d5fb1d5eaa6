"""The root command group: a command typed without its group is pointed to."""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup


class Commands(TyperGroup):
    """A command that lives in a group (``askd answer`` is ``askd pending
    answer``) is named where it is, instead of only "No such command"."""

    # Any: Typer 0.29 carries its own copy of click as the private
    # typer._click, whose Context and Command have no public name to import.
    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
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
