"""``askd ask``: ask a user one question from the terminal and wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from askd.cli.clients import CaCertOption, TokenOption, UrlOption, agent_client, command
from askd.cli.common import ConfigOption, eprint, print_json
from askd.client import Result, Status
from askd.client.agent import DEFAULT_POLL_SECONDS
from askd.core.models import Option, Question

EXIT_TIMEOUT = 3
EXIT_CANCELLED = 4


def readable(result: Result) -> str:
    """The answer values, one line per question (a list joined with ", ")."""
    lines = []
    for value in (result.answers or {}).values():
        lines.append(", ".join(value) if isinstance(value, list) else value)
    return "\n".join(lines)


@command
def ask(
    user: str = typer.Option(..., "--user", help="The user to ask."),
    session: str = typer.Option(..., "--session", help="The session (yours to choose)."),
    question: str = typer.Option(..., "--question", help="The question text."),
    options: list[str] = typer.Option([], "--option", help="A choice; repeat for several (none: free text)."),
    multi: bool = typer.Option(False, "--multi", help="The user may pick several choices."),
    header: str | None = typer.Option(None, "--header", help="A short title shown above the question."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds before the question times out (default: the daemon's)."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Print the request id and return at once."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    url: str | None = UrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Ask a user a question and print the answer (exit 3 on timeout, 4 on cancel)."""
    fields: dict[str, Any] = {"question": question}
    if header is not None:
        fields["header"] = header
    if options:
        fields["options"] = [Option(label=label) for label in options]
    if multi:
        fields["multiSelect"] = True
    q = Question(**fields)
    with agent_client(url, token, config, DEFAULT_POLL_SECONDS, cacert) as agent:
        agent.health()  # a daemon that is not there fails now; once asked, drops are retried
        if no_wait:
            result = agent.submit(session, user, [q], timeout=timeout)
        else:
            result = agent.ask(session, user, [q], timeout=timeout)
    if as_json:
        print_json(result.raw)
    elif result.pending:
        typer.echo(result.request_id)
    elif result.answered:
        typer.echo(readable(result))
    if result.status is Status.timeout:
        if not as_json:
            eprint(f"askd: no answer: {result.error or 'timed out'}")
        raise typer.Exit(EXIT_TIMEOUT)
    if result.status is Status.cancelled:
        if not as_json:
            eprint(f"askd: the question was cancelled: {result.error or 'cancelled'}")
        raise typer.Exit(EXIT_CANCELLED)
