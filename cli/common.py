"""What every command shares: loading settings, one-line errors, output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

# Defined in askd.cli.errors (no Typer there, for the hook's fast start);
# the commands import them from here as they always have.
from askd.cli.errors import EXIT_ERROR, EXIT_USAGE, CliError, debug_enabled, eprint, fail  # noqa: F401

if TYPE_CHECKING:
    from askd.config import Settings

# The settings (askd.config: pydantic-settings, the mail code) are imported
# by the commands that read them, not by every command: ``askd --version``
# and ``askd hook`` never load them unless they must find the daemon there.

def settings(config: Path | None = None, **flags: Any) -> Settings:
    from askd.config import ConfigError, load_settings

    try:
        return load_settings(config, **flags)
    except ConfigError as err:
        raise CliError(str(err), EXIT_USAGE) from None


def print_json(obj: Any) -> None:
    # Indented for people to read, not the codec's compact form.
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False))


def reply(as_json: bool, obj: Any, text: str) -> None:
    """What an admin command did: ``obj`` as JSON with ``--json``, else a line."""
    if as_json:
        print_json(obj)
    else:
        typer.echo(text)


def reply_ack(as_json: bool, done: str, session: str, request: str, obj: Any = None, more: str = "") -> None:
    """What an admin did to one request: ``Declined REQ in session S.`` (``more``
    before the stop), or ``obj`` (default ``{"accepted": true}``) with ``--json``."""
    reply(as_json, {"accepted": True} if obj is None else obj, f"{done} {request} in session {session}{more}.")


ConfigOption = typer.Option(
    None,
    "--config",
    help="TOML configuration file (default: $ASKD_CONFIG).",
    exists=False,
    dir_okay=False,
)
ReplyJsonOption = typer.Option(False, "--json", help="Print the daemon's reply as JSON.")


def session_argument(what: str = "question") -> Any:
    return typer.Argument(..., help=f"The {what}'s session id.")


def request_argument(what: str = "question") -> Any:
    return typer.Argument(..., help=f"The {what}'s request id (see `askd pending list`).")


ReasonOption = typer.Option(None, "--reason", help="Why (at most 1,000 characters); the agent reads it.")
