"""``askd user``: what askd knows of a user beyond their token: the e-mail
address it mails them questions at (notify.smtp_url), the Slack user id
it sends them direct messages at (notify.slack_bot_token), and their away,
with delegates (protocol section 20, Away, with delegates: ``askd user
away``, ``askd user back``)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import typer

from askd.cli.clients import ADMIN, AdminTarget, JsonOption, admin_command
from askd.cli.common import EXIT_USAGE, fail, print_json

app = typer.Typer(help="Users' e-mail addresses and Slack ids, and their aways with delegates.", no_args_is_help=True)


def _show(record: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(record)
        return
    line = f"User {record['user']}: " + ("no e-mail address" if record["email"] is None else record["email"])
    if record.get("slack"):
        line += f", Slack {record['slack']}"
    typer.echo(line if record["email"] is not None or record.get("slack") else line + ".")
    if record.get("away"):
        _show_away(record["away"])


def _show_away(away: dict[str, Any]) -> None:
    typer.echo(f"User {away['user']} is away until {away['until']}; their questions also go to {', '.join(away['delegates'])}.")


def until_rfc3339(text: str) -> str:
    """``--until``: an RFC 3339 time, or a bare date (``2026-12-24``: 00:00
    UTC that day), as the RFC 3339 time the API takes."""
    try:
        if "T" not in text.upper():
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return day.strftime("%Y-%m-%dT%H:%M:%SZ")
        at = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        fail(f"--until: {text!r} is neither a date (2026-12-24) nor an RFC 3339 time", EXIT_USAGE)
    if at.tzinfo is None:
        fail("--until: give the time's offset (Z or +hh:mm), or a bare date", EXIT_USAGE)
    return text


@app.command("set")
@admin_command
def set_(
    user: str = typer.Argument(..., help="The user id (a user token's sub)."),
    email: str | None = typer.Option(None, "--email", help="The address askd mails this user's questions to."),
    slack: str | None = typer.Option(None, "--slack", help="The Slack user id (U...) askd sends this user's questions to."),
    clear: bool = typer.Option(False, "--clear", help="Forget the user's address: no more mail."),
    clear_slack: bool = typer.Option(False, "--clear-slack", help="Forget the user's Slack id: no more direct messages."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Set (or with --clear, --clear-slack forget) a user's e-mail address
    and Slack user id, on every node."""
    if email is not None and clear:
        fail("give --email ADDRESS or --clear", EXIT_USAGE)
    if slack is not None and clear_slack:
        fail("give --slack ID or --clear-slack", EXIT_USAGE)
    settings: dict[str, str | None] = {}
    if email is not None or clear:
        settings["email"] = None if clear else email
    if slack is not None or clear_slack:
        settings["slack"] = None if clear_slack else slack
    if not settings:
        fail("give --email ADDRESS or --clear", EXIT_USAGE)
    with admin.client() as client:
        record = client.set_user(user, **settings)
    _show(record, as_json)


@app.command("show")
@admin_command
def show(
    user: str = typer.Argument(..., help="The user id."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Show a user's e-mail address and Slack user id."""
    with admin.client() as client:
        record = client.user(user)
    _show(record, as_json)


@app.command("away")
@admin_command
def away(
    user: str = typer.Argument(..., help="The user id who is away."),
    until: str = typer.Option(..., "--until", help="Until when: a date (00:00 UTC that day) or an RFC 3339 time."),
    to: list[str] = typer.Option(..., "--to", help="A delegate: a user id or group:NAME (repeat for more)."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Mark a user away: until then their pending and new questions also go
    to the delegates (who may answer for them); the user may still answer."""
    at = until_rfc3339(until)
    with admin.client() as client:
        record = client.set_away(user, at, list(to))
    if as_json:
        print_json(record)
    else:
        _show_away(record)


@app.command("back")
@admin_command
def back(
    user: str = typer.Argument(..., help="The user id who is back."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """End a user's away now: the delegates lose the questions they had only for it."""
    with admin.client() as client:
        record = client.end_away(user)
    if as_json:
        print_json(record)
    else:
        typer.echo(f"User {user} is back.")
