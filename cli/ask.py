"""``askd ask``: ask a user one question from the terminal and wait."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from askd.cli.clients import CaCertOption, TokenOption, UrlOption, agent_client, command
from askd.cli.common import EXIT_USAGE, ConfigOption, eprint, fail, print_json
from askd.cli.output import QuestionMarkdown, duration, parse_time
from askd.cli.pending import answers_from_flags
from askd.client import AgentClient, Result, Status
from askd.client.agent import DEFAULT_POLL_SECONDS
from askd.config import ConfigError, load_settings
from askd.channels.event import inbox_url
from askd.protocol.models import Option, Question

EXIT_TIMEOUT = 3
EXIT_CANCELLED = 4
EXIT_DECLINED = 5


def readable(result: Result) -> str:
    """The answer values, one line per question (a list joined with ", ")."""
    lines = []
    for value in (result.answers or {}).values():
        lines.append(", ".join(value) if isinstance(value, list) else value)
    return "\n".join(lines)


class _Waiting:
    """The status line's text, rendered afresh at each refresh of the
    display, so the time left counts down by itself. Cut to the terminal's
    width, never wrapped: a wrapped live line leaves its copies behind."""

    def __init__(self, user: str, expires_at: str | None) -> None:
        self.user, self.expires = user, parse_time(expires_at or "")

    def __rich__(self) -> Text:
        text = Text(f"Waiting for {self.user} to answer", no_wrap=True, overflow="ellipsis")
        if self.expires is not None:
            left = (self.expires - datetime.now(timezone.utc)).total_seconds()
            text.append(f" · {duration(left)} left", style="bold")
        return text


def _inbox_base(agent_url: str, config: Path | None) -> str:
    """``public_url`` when configured (links people open), else the daemon's URL."""
    try:
        public = load_settings(config).public_url
    except ConfigError:
        public = None
    return str(public) if public is not None else agent_url


@contextmanager
def _status_line(user: str, result: Result, link: str) -> Iterator[None]:
    """The link once on its own line (a URL is never cut), then a live line
    on stderr while the ask waits, erased when it ends."""
    console = Console(stderr=True, highlight=False)
    console.print(Text.assemble("Answer at ", (link, "underline")), soft_wrap=True)
    with console.status(_Waiting(user, result.expires_at), spinner="dots"):
        yield


def _ask_on_a_terminal(agent: AgentClient, session: str, user: str | None, q: Question, opts: dict[str, Any], config: Path | None) -> Result:
    # What was asked, as the person will read it, above the status line.
    Console(stderr=True, highlight=False).print(QuestionMarkdown(q.question))
    result = agent.submit(session, user, [q], **opts)
    if not result.pending:
        return result
    with _status_line(user or ", ".join(opts["to"]), result, inbox_url(_inbox_base(agent.url, config), session)):
        return agent.wait(session, result.request_id)


def _step(text: str) -> tuple[float, list[str]]:
    """``--escalate 300=group:leads,carol``: seconds after the ask, then whom."""
    after, sep, whom = text.partition("=")
    try:
        seconds = float(after)
    except ValueError:
        seconds = -1.0
    entries = [w for w in whom.split(",") if w]
    if not sep or seconds <= 0 or not entries:
        fail(f"--escalate {text!r}: expected SECONDS=WHOM[,WHOM...], e.g. 300=group:leads", EXIT_USAGE)
    return seconds, entries


@command
def ask(
    user: str | None = typer.Option(None, "--user", help="The user to ask (or --to)."),
    to: list[str] = typer.Option([], "--to", help="Whom to ask instead of --user: a user id or group:NAME; repeat for several."),
    escalate: list[str] = typer.Option(
        [], "--escalate", help="SECONDS=WHOM[,WHOM...]: who joins if nobody has answered by then, e.g. 300=group:leads; repeat for more steps."
    ),
    session: str = typer.Option(..., "--session", help="The session (yours to choose)."),
    question: str = typer.Option(..., "--question", help="The question text (Markdown)."),
    options: list[str] = typer.Option([], "--option", help="A choice; repeat for several (none: free text)."),
    multi: bool = typer.Option(False, "--multi", help="The user may pick several choices."),
    header: str | None = typer.Option(None, "--header", help="A short title shown above the question."),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds before the question times out (default: the daemon's)."),
    max_extension: float | None = typer.Option(
        None, "--max-extension", help="Seconds the person may add to the deadline, in all (default: none)."
    ),
    on_timeout: list[str] = typer.Option(
        [], "--on-timeout", help='"QUESTION=VALUE": the answer taken if nobody answers in time (exit 0, not 3).'
    ),
    remind_every: float | None = typer.Option(
        None, "--remind-every", help="Remind those with no open tab every SECONDS (at least 60) while it waits (default: the daemon's)."
    ),
    remind_times: int | None = typer.Option(None, "--remind-times", help="How many reminders at most, 1 to 10 (default 1; with --remind-every)."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Print the request id and return at once."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    url: str | None = UrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Ask a user a question and print the answer (exit 3 on timeout, 4 on cancel, 5 when declined).

    On a terminal, the inbox link once on stderr, then a status line of whom
    it waits for and the time left, until the answer comes."""
    if (user is None) == (not to):
        fail("give either --user USER or one or more --to USER|group:NAME", EXIT_USAGE)
    aud: dict[str, Any] = {"to": to or None, "escalate": [_step(s) for s in escalate] or None}
    fields: dict[str, Any] = {"question": question}
    if header is not None:
        fields["header"] = header
    if options:
        fields["options"] = [Option(label=label) for label in options]
    if multi:
        fields["multiSelect"] = True
    q = Question(**fields)
    opts: dict[str, Any] = {"timeout": timeout, "max_extension": max_extension, **aud}
    if remind_times is not None and remind_every is None:
        fail("--remind-times needs --remind-every SECONDS", EXIT_USAGE)
    if remind_every is not None:
        opts["remind"] = (remind_every, 1 if remind_times is None else remind_times)
    if on_timeout:
        opts["on_timeout"] = answers_from_flags(on_timeout, [q.model_dump(mode="json")], "--on-timeout")
    with agent_client(url, token, config, DEFAULT_POLL_SECONDS, cacert) as agent:
        agent.health()  # a daemon that is not there fails now; once asked, drops are retried
        if no_wait:
            result = agent.submit(session, user, [q], **opts)
        elif not as_json and sys.stderr.isatty():
            result = _ask_on_a_terminal(agent, session, user, q, opts, config)
        else:
            result = agent.ask(session, user, [q], **opts)
    if as_json:
        print_json(result.raw)
    elif result.pending:
        typer.echo(result.request_id)
    elif result.answered or result.defaulted:
        typer.echo(readable(result))
    if result.defaulted:
        # The agent asked for a safe default: nobody answered, it is the answer.
        if not as_json:
            eprint("askd: no answer in time; took the --on-timeout default")
        return
    if result.status is Status.declined:
        if not as_json:
            who = result.answered_by or "an admin"
            eprint(f"askd: {who} declined to answer" + (f": {result.reason}" if result.reason else ""))
        raise typer.Exit(EXIT_DECLINED)
    if result.status is Status.timeout:
        if not as_json:
            eprint(f"askd: no answer: {result.error or 'timed out'}")
        raise typer.Exit(EXIT_TIMEOUT)
    if result.status is Status.cancelled:
        if not as_json:
            eprint(f"askd: the question was cancelled: {result.error or 'cancelled'}")
        raise typer.Exit(EXIT_CANCELLED)
