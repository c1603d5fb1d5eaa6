"""``askd mcp``: serve askd's tools to an MCP host over stdio."""

from __future__ import annotations

import uuid
from pathlib import Path

import typer
from pydantic import TypeAdapter, ValidationError

from askd.cli.clients import TokenOption, UrlOption, global_options
from askd.cli.common import EXIT_USAGE, ConfigOption, fail
from askd.cli.serve import LogLevel
from askd.protocol.ids import Id
from askd.protocol.ids import ALL_SESSIONS

_id: TypeAdapter[str] = TypeAdapter(Id)


def _checked_id(value: str, flag: str) -> str:
    try:
        return _id.validate_python(value)
    except ValidationError:
        fail(f"{flag} must be 1 to 256 printable characters", EXIT_USAGE)


def _session(value: str | None) -> str:
    if value is None:
        return f"mcp-{uuid.uuid4().hex}"
    if value == ALL_SESSIONS:
        fail("--session '*' is subscribe's wildcard, never a session id", EXIT_USAGE)
    return _checked_id(value, "--session")


def mcp(
    user: str = typer.Option(..., "--user", help="The user every question goes to."),
    session: str | None = typer.Option(None, "--session", help="The session to ask in (default: a new one per process)."),
    max_wait: float | None = typer.Option(
        None, "--max-wait", min=0.001, help="Longest one tool call waits; then it returns pending (default: until the question ends)."
    ),
    url: str | None = UrlOption,
    token: str | None = TokenOption,
    config: Path | None = ConfigOption,
    log_level: LogLevel = typer.Option(LogLevel.info, "--log-level", help="Log level of the lines on stderr."),
    no_elicit: bool = typer.Option(
        False, "--no-elicit", help="Never ask in the host itself (elicitation), even where the host offers it."
    ),
    progress_seconds: float = typer.Option(10.0, "--progress-seconds", min=0.01, hidden=True),  # tests: no 10 s waits
) -> None:
    """Serve ask_user_questions and get_answer to an MCP host over stdio."""
    from askd.mcp.bridge import BridgeConfig
    from askd.mcp.server import run

    g = global_options()
    cfg = BridgeConfig(
        user=_checked_id(user, "--user"),
        session=_session(session),
        url=url or g.url,
        token=token or g.token,
        config=config,
        max_wait=max_wait,
        progress_seconds=progress_seconds,
        elicit=not no_elicit,
    )
    try:
        run(cfg, log_level.value)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
