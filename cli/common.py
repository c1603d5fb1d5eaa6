"""What every command shares: loading settings, one-line errors, output."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from askd.config import ConfigError, Settings, load_settings

EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """An error to print as one line (exit ``code``)."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def debug_enabled() -> bool:
    return os.environ.get("ASKD_DEBUG", "") not in ("", "0", "false")


def settings(config: Path | None = None, **flags: Any) -> Settings:
    try:
        return load_settings(config, **flags)
    except ConfigError as err:
        raise CliError(str(err), EXIT_USAGE) from None


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    raise CliError(message, code)


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


def eprint(message: str) -> None:
    print(message, file=sys.stderr)


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
