"""``askd serve``: run the daemon in the foreground."""

from __future__ import annotations

import asyncio
from enum import Enum
from pathlib import Path

import typer

from askd.cli.common import EXIT_USAGE, ConfigOption, fail, settings
from askd.config import ConfigError


class LogFormat(str, Enum):
    json = "json"
    console = "console"


class Loop(str, Enum):
    asyncio = "asyncio"
    uvloop = "uvloop"


class LogLevel(str, Enum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


def serve(
    config: Path | None = ConfigOption,
    host: str | None = typer.Option(None, "--host", help="Public listener address (default: 127.0.0.1)."),
    port: int | None = typer.Option(None, "--port", help="Public listener port; 0 picks one (default: 8765)."),
    admin_host: str | None = typer.Option(None, "--admin-host", help="Admin listener address (default: 127.0.0.1)."),
    admin_port: int | None = typer.Option(None, "--admin-port", help="Admin listener port; 0 picks one (default: 8766)."),
    question_timeout: float | None = typer.Option(
        None, "--question-timeout", help="Default question timeout in seconds, may be fractional (default: 900)."
    ),
    log_format: LogFormat | None = typer.Option(None, "--log-format", help="json or console (default: console on a terminal, else json)."),
    log_level: LogLevel | None = typer.Option(None, "--log-level", help="Log level (default: info)."),
    store: str | None = typer.Option(
        None, "--store", help="sqlite (default: <state dir>/askd.db), sqlite:///ABSOLUTE/PATH.db, memory, or redis://HOST:PORT/DB."
    ),
    loop: Loop | None = typer.Option(None, "--loop", help="Event loop: asyncio or uvloop (pip install 'askd[uvloop]') (default: asyncio)."),
) -> None:
    """Run the askd daemon until SIGTERM or Ctrl-C."""
    from askd.server import logs
    from askd.server.app import ListenError, serve as run
    from askd.store import StoreError

    s = settings(
        config,
        host=host,
        port=port,
        admin_host=admin_host,
        admin_port=admin_port,
        question_timeout_seconds=question_timeout,
        log__format=log_format.value if log_format else None,
        log__level=log_level.value if log_level else None,
        loop=loop.value if loop else None,
        store=store,
    )
    runner = asyncio.run
    if s.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            fail("invalid setting loop (ASKD_LOOP): uvloop is not installed (pip install 'askd[uvloop]')", 2)
        runner = uvloop.run
    logs.configure(s.log.level, s.log.resolved_format())
    try:
        runner(run(s))
    except ListenError as err:
        fail(str(err))
    except StoreError as err:
        fail(str(err), EXIT_USAGE)
    except ConfigError as err:  # found at start, e.g. a TLS key that does not load
        fail(str(err), EXIT_USAGE)
    except KeyboardInterrupt:  # a second Ctrl-C during the graceful stop
        pass
