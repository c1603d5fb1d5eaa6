"""``askd user``: what askd knows of a user beyond their token: the e-mail
address it mails them questions at (notify.smtp_url)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from askd.cli.clients import AdminUrlOption, CaCertOption, JsonOption, TokenOption, admin_client, command
from askd.cli.common import EXIT_USAGE, ConfigOption, fail, print_json

app = typer.Typer(help="Users' e-mail addresses, for e-mail notifications.", no_args_is_help=True)


def _show(record: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(record)
    elif record["email"] is None:
        typer.echo(f"User {record['user']}: no e-mail address.")
    else:
        typer.echo(f"User {record['user']}: {record['email']}")


@app.command("set")
@command
def set_(
    user: str = typer.Argument(..., help="The user id (a user token's sub)."),
    email: str | None = typer.Option(None, "--email", help="The address askd mails this user's questions to."),
    clear: bool = typer.Option(False, "--clear", help="Forget the user's address: no more mail."),
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Set (or with --clear forget) a user's e-mail address, on every node."""
    if (email is None) == (not clear):
        fail("give --email ADDRESS or --clear", EXIT_USAGE)
    with admin_client(admin_url, token, config, cacert) as admin:
        record = admin.set_user_email(user, None if clear else email)
    _show(record, as_json)


@app.command("show")
@command
def show(
    user: str = typer.Argument(..., help="The user id."),
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Show a user's e-mail address."""
    with admin_client(admin_url, token, config, cacert) as admin:
        record = admin.user(user)
    _show(record, as_json)
