"""What every command reports a failure with: one line on stderr and the
exit code, the traceback only with ``--debug`` or ``ASKD_DEBUG=1``. No
Typer here, nor the clients: ``askd hook``'s fast start (``hook_run``)
reports through it too."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """An error to print as one line (exit ``code``)."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    raise CliError(message, code)


def debug_enabled() -> bool:
    return os.environ.get("ASKD_DEBUG", "") not in ("", "0", "false")


def eprint(message: str) -> None:
    print(message, file=sys.stderr)


def describe_error(err: BaseException) -> tuple[str, int]:
    """The one line to print and the exit code."""
    # Imported here: only a failure needs them (and the command that failed
    # has loaded httpx already, and the settings if they failed).
    import httpx

    from askd.client.errors import ApiError, AskdClientError, AuthError, DaemonUnavailable
    from askd.config import ConfigError

    if isinstance(err, CliError):
        return str(err), err.code
    if isinstance(err, ConfigError):
        return str(err), EXIT_USAGE
    if isinstance(err, DaemonUnavailable):
        if err.reason.startswith("HTTP "):  # it is there, failing: say what it said
            return f"the daemon at {err.url} kept failing: {err.reason}", EXIT_ERROR
        return f"cannot reach askd at {err.url} ({err.reason}); is `askd serve` running?", EXIT_ERROR
    if isinstance(err, AuthError):
        # One "askd:" is printed before this already.
        what = "the token was refused" if err.status == 401 else "the token's role was refused"
        return f"{what} ({err.status}): {err.message}", EXIT_ERROR
    if isinstance(err, ApiError):
        return f"{err.message} ({err.status} {err.code})", EXIT_ERROR
    if isinstance(err, AskdClientError):
        return str(err), EXIT_ERROR
    if isinstance(err, httpx.HTTPError):
        return f"HTTP error: {err}", EXIT_ERROR
    return f"{type(err).__name__}: {err}", EXIT_ERROR
