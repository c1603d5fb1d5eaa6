"""The ``askd`` command's Typer app: the root's options and its commands,
each command's module imported only when that command runs (or when help
lists them all). ``askd.cli.main`` runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from askd.cli.clients import AdminUrlOption, CaCertOption, TokenOption, UrlOption, remember_globals
from askd.cli.commands import Commands, Lazy, LazyCommands

# The root's commands in the order help lists them (Typer lists a root's
# commands before its groups): the module under askd.cli and its attribute.
COMMANDS = {
    "serve": Lazy("serve", "serve"),
    "disconnect": Lazy("sessions", "disconnect"),
    "cancel": Lazy("sessions", "cancel"),
    "ask": Lazy("ask", "ask"),
    "withdraw": Lazy("withdraw", "withdraw"),
    "extend": Lazy("time", "extend"),
    "decline": Lazy("time", "decline"),
    "status": Lazy("status", "status"),
    "open": Lazy("open", "open_page"),
    "mcp": Lazy("mcp", "mcp"),
    "schema": Lazy("schema", "schema"),
    "pending": Lazy("pending", "app", group=True),
    "connections": Lazy("connections", "app", group=True),
    "group": Lazy("groups", "app", group=True),
    "user": Lazy("users", "app", group=True),
    "token": Lazy("token", "app", group=True),
    "notify": Lazy("notify", "app", group=True),
    "receipt": Lazy("receipt", "app", group=True),
    "audit": Lazy("audit", "app", group=True),
    "hook": Lazy("hook", "app", group=True),
}


class RootCommands(Commands):
    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(app, COMMANDS)


app = typer.Typer(
    cls=RootCommands,
    name="askd",
    help="askd: let AI agents ask a human a question and wait for the answer.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from askd import __version__

        typer.echo(f"askd {__version__}")  # as askd.cli.main's fast --version
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors (or set ASKD_DEBUG=1)."),
    url: str | None = UrlOption,
    admin_url: str | None = AdminUrlOption,
    token_: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
) -> None:
    remember_globals(ctx, url, admin_url, token_, cacert)
    if debug:
        import os

        os.environ["ASKD_DEBUG"] = "1"


