"""``askd withdraw``: an agent takes one of its questions back."""

from __future__ import annotations

from pathlib import Path

import typer

from askd.cli.clients import CaCertOption, TokenOption, UrlOption, agent_client, command
from askd.cli.common import ConfigOption, print_json
from askd.client.agent import DEFAULT_POLL_SECONDS


@command
def withdraw(
    session: str = typer.Argument(..., help="The question's session."),
    request: str = typer.Argument(..., help="The question's requestId."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    url: str | None = UrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Withdraw one pending question (it ends cancelled); an ended one is left as it is."""
    with agent_client(url, token, config, DEFAULT_POLL_SECONDS, cacert) as agent:
        result = agent.withdraw(session, request)
    if as_json:
        print_json(result.raw)
    else:
        # The daemon answers the question's real result: withdrawn now or
        # before, or ended some other way first.
        why = f" ({result.error})" if result.error else ""
        typer.echo(f"Question {request} of session {session}: {result.status.value}{why}.")
