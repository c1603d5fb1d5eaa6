"""``askd disconnect`` and ``askd cancel``: drop connections (a disconnect
never ends a question) and cancel a session's questions."""

from __future__ import annotations

from pathlib import Path

import typer

from askd.cli.clients import AdminUrlOption, CaCertOption, TokenOption, admin_client, command
from askd.cli.common import EXIT_USAGE, ConfigOption, ReplyJsonOption, fail, reply
from askd.cli.output import plural


@command
def disconnect(
    user: str | None = typer.Option(None, "--user", help="Every connection of this user."),
    session: str | None = typer.Option(None, "--session", help="Connections subscribed to this session."),
    connection: str | None = typer.Option(None, "--connection", help="One connection (see `askd connections list`)."),
    everyone: bool = typer.Option(False, "--all", help="Every connection."),
    clean: bool = typer.Option(False, "--clean", help="Close with code 1001 instead of dropping the TCP link."),
    as_json: bool = ReplyJsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Drop WebSocket connections (default: as a network failure would). Questions stay pending."""
    if not (user or session or connection or everyone):
        fail("name --user, --session, --connection or --all", EXIT_USAGE)
    mode = "close" if clean else "abort"
    with admin_client(admin_url, token, config, cacert) as admin:
        n = admin.disconnect(user=user, session=session, connection=connection, all=everyone, mode=mode)
    reply(as_json, {"disconnected": n, "mode": mode}, f"Disconnected {plural(n, 'connection')} ({mode}).")


@command
def cancel(
    session: str = typer.Argument(..., help="The session to cancel."),
    as_json: bool = ReplyJsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Cancel every pending question of a session and of its sub-sessions."""
    with admin_client(admin_url, token, config, cacert) as admin:
        n = admin.cancel_session(session)
    reply(as_json, {"cancelled": n}, f"Cancelled {plural(n, 'question')} in session {session} and its sub-sessions.")
