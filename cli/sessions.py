"""``askd disconnect`` and ``askd cancel``: drop connections (a disconnect
never ends a question) and cancel a session's questions."""

from __future__ import annotations

import typer

from askd.cli.clients import ADMIN, AdminTarget, admin_command
from askd.cli.common import EXIT_USAGE, ReplyJsonOption, fail, reply
from askd.cli.output import plural


@admin_command
def disconnect(
    user: str | None = typer.Option(None, "--user", help="Every connection of this user."),
    session: str | None = typer.Option(None, "--session", help="Connections subscribed to this session."),
    connection: str | None = typer.Option(None, "--connection", help="One connection (see `askd connections list`)."),
    everyone: bool = typer.Option(False, "--all", help="Every connection."),
    clean: bool = typer.Option(False, "--clean", help="Close with code 1001 instead of dropping the TCP link."),
    as_json: bool = ReplyJsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Drop WebSocket connections (default: as a network failure would). Questions stay pending."""
    if not (user or session or connection or everyone):
        fail("name --user, --session, --connection or --all", EXIT_USAGE)
    mode = "close" if clean else "abort"
    with admin.client() as client:
        n = client.disconnect(user=user, session=session, connection=connection, all=everyone, mode=mode)
    reply(as_json, {"disconnected": n, "mode": mode}, f"Disconnected {plural(n, 'connection')} ({mode}).")


@admin_command
def cancel(
    session: str = typer.Argument(..., help="The session to cancel."),
    as_json: bool = ReplyJsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Cancel every pending question of a session and of its sub-sessions."""
    with admin.client() as client:
        n = client.cancel_session(session)
    reply(as_json, {"cancelled": n}, f"Cancelled {plural(n, 'question')} in session {session} and its sub-sessions.")
