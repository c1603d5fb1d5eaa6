"""``askd extend`` (an agent moves its question's deadline) and ``askd
decline`` (an admin refuses a question on the person's behalf)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer

from askd.cli.clients import ADMIN, AdminTarget, CaCertOption, TokenOption, UrlOption, admin_command, agent_client, command
from askd.cli.common import (
    ConfigOption,
    ReasonOption,
    ReplyJsonOption,
    print_json,
    reply_ack,
    request_argument,
    session_argument,
)
from askd.client.agent import DEFAULT_POLL_SECONDS


@command
def extend(
    session: str = typer.Argument(..., help="The question's session."),
    request: str = typer.Argument(..., help="The question's requestId."),
    seconds: float = typer.Argument(..., help="How many seconds later its deadline moves (up to 86400)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    url: str | None = UrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Give your pending question more time (refused past max_timeout_seconds
    plus its maxExtensionSeconds from its creation); an ended one is left as it is."""
    with agent_client(url, token, config, DEFAULT_POLL_SECONDS, cacert) as agent:
        result = agent.extend(session, request, seconds)
    if as_json:
        print_json(result.raw)
    elif result.pending:
        typer.echo(f"Question {request} of session {session} now expires at {result.expires_at}.")
    else:
        typer.echo(f"Question {request} of session {session} has ended: {result.status.value}.")


def declining(what: str, done: str, doc: str) -> Callable[..., None]:
    """The admin's decline of a pending ``what`` (a question: ``askd decline``;
    an action: ``askd pending deny``), replying ``done`` (Declined, Denied)."""

    def decline(
        session: str = session_argument(what),
        request: str = request_argument(what),
        reason: str | None = ReasonOption,
        as_json: bool = ReplyJsonOption,
        admin: AdminTarget = ADMIN,
    ) -> None:
        with admin.client() as client:
            client.decline(session, request, reason)
        reply_ack(as_json, done, session, request)

    decline.__doc__ = doc
    return admin_command(decline)


decline = declining("question", "Declined", "Decline a pending question as if the user had (it ends declined).")
