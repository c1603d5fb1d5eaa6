"""The root command group: each command is built when it is first used (a
command's module, and what it imports, loads only for that command), and a
command typed without its group is pointed to."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperGroup


@dataclass(frozen=True)
class Lazy:
    """A command of the root, built on first use: ``module``'s ``attribute``,
    a function (``askd ask``) or a Typer group (``askd pending``)."""

    module: str
    attribute: str
    group: bool = False

    def build(self, name: str, root: typer.Typer) -> Any:
        """The click command that registering it on ``root`` (``app.command``
        or ``app.add_typer``) builds, through Typer's own functions, so that
        its help and behaviour are what they were when every command was
        built at start."""
        target = getattr(importlib.import_module(f"askd.cli.{self.module}"), self.attribute)
        holder = typer.Typer()
        if self.group:
            holder.add_typer(target, name=name)
            return typer.main.get_group_from_info(
                holder.registered_groups[0],
                pretty_exceptions_short=root.pretty_exceptions_short,
                suggest_commands=root.suggest_commands,
                rich_markup_mode=root.rich_markup_mode,
            )
        holder.command(name)(target)
        return typer.main.get_command_from_info(
            holder.registered_commands[0],
            pretty_exceptions_short=root.pretty_exceptions_short,
            rich_markup_mode=root.rich_markup_mode,
        )


class LazyCommands(MutableMapping[str, Any]):
    """The root's ``commands``: every name known at start, each command built
    (its module imported) when it is first looked up."""

    def __init__(self, root: typer.Typer, table: dict[str, Lazy]) -> None:
        self._root = root
        self._table: dict[str, Lazy | None] = dict(table)  # None: added built (add_command)
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            lazy = self._table[name]  # KeyError: no such command
            assert lazy is not None, name
            self._built[name] = lazy.build(name, self._root)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command
        self._table.setdefault(name, None)

    def __delitem__(self, name: str) -> None:
        del self._table[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table


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
