"""The ``askd`` command: wires the command groups together, nothing more."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import typer

from askd import __version__
from askd.cli import ask, audit, connections, groups, hook, mcp, notify, pending, receipt, schema, serve, sessions, status, time, token, users, withdraw
from askd.cli import open as open_command
from askd.cli.commands import Commands
from askd.cli.clients import AdminUrlOption, CaCertOption, TokenOption, UrlOption, remember_globals
from askd.cli.common import CliError, debug_enabled, eprint

app = typer.Typer(
    cls=Commands,
    name="askd",
    help="askd: let AI agents ask a human a question and wait for the answer.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"askd {__version__}")
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


app.command("serve")(serve.serve)
app.add_typer(pending.app, name="pending")
app.add_typer(connections.app, name="connections")
app.command("disconnect")(sessions.disconnect)
app.command("cancel")(sessions.cancel)
app.add_typer(groups.app, name="group")
app.add_typer(users.app, name="user")
app.command("ask")(ask.ask)
app.command("withdraw")(withdraw.withdraw)
app.command("extend")(time.extend)
app.command("decline")(time.decline)
app.add_typer(token.app, name="token")
app.command("status")(status.status)
app.command("open")(open_command.open_page)
app.add_typer(notify.app, name="notify")
app.command("mcp")(mcp.mcp)
app.command("schema")(schema.schema)
app.add_typer(receipt.app, name="receipt")
app.add_typer(audit.app, name="audit")
app.add_typer(hook.app, name="hook")


def main() -> None:
    try:
        # Standalone mode: click prints usage errors (exit 2) and exits with
        # each command's typer.Exit code; everything else comes out here.
        app()
    except CliError as err:
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {err}")
        sys.exit(err.code)
    except Exception as err:  # everything unexpected: one line, no traceback
        if debug_enabled():
            traceback.print_exc()
        eprint(f"askd: {type(err).__name__}: {err}")
        sys.exit(1)


if __name__ == "__main__":
    main()
