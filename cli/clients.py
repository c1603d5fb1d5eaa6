"""How commands reach the daemon: the ``--url``/``--admin-url``/``--token``
options (on the root and on each command; the command's wins), client
construction through ``askd.client.Discovery``, and turning every failure
into one line on stderr with the spec's exit code."""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from askd.cli.common import ConfigOption, debug_enabled, eprint
# describe_error and global_options are defined without Typer (for the
# hook's fast start); the commands import them from here as they always have.
from askd.cli.errors import describe_error
from askd.cli.root_options import GlobalOptions, global_options, set_global_options  # noqa: F401

if TYPE_CHECKING:
    from askd.client import AdminClient, AgentClient

# The clients (httpx, and pydantic for the agent's results) and the
# settings are imported by the calls that use them: the root command and
# ``askd hook`` import this module for its options alone.

F = TypeVar("F", bound=Callable[..., Any])

UrlOption = typer.Option(None, "--url", help="The daemon's public URL (env ASKD_URL; default: from askd.json, else http://127.0.0.1:8765).")
AdminUrlOption = typer.Option(
    None, "--admin-url", help="The daemon's admin URL (env ASKD_ADMIN_URL; default: from askd.json, else http://127.0.0.1:8766)."
)
TokenOption = typer.Option(
    None,
    "--token",
    help="Bearer token (env ASKD_ADMIN_TOKEN, or ASKD_AGENT_TOKEN for ask; default: minted from the local secret).",
)
CaCertOption = typer.Option(
    None,
    "--cacert",
    help="PEM CA bundle to trust besides the system's, for a daemon serving TLS (env ASKD_CA_FILE).",
    dir_okay=False,
)
JsonOption = typer.Option(False, "--json", help="Print JSON for scripts instead of a table.")


def remember_globals(
    ctx: typer.Context, url: str | None, admin_url: str | None, token: str | None, cacert: Path | None
) -> None:
    """Called by the root callback on every invocation: keep the root's
    options for the command that runs next."""
    ctx.obj = set_global_options(GlobalOptions(url, admin_url, token, cacert))


def admin_client(admin_url: str | None, token: str | None, config: Path | None, cacert: Path | None = None) -> AdminClient:
    from askd.client import AdminClient, Discovery

    g = global_options()
    return AdminClient(admin_url or g.admin_url, token or g.token, discovery=Discovery(config), ca_file=cacert or g.cacert)


@dataclass(frozen=True)
class AdminTarget:
    """The admin options of one command (``--admin-url``, ``--token``,
    ``--cacert``, ``--config``), given to an :func:`admin_command` as ``admin``."""

    admin_url: str | None = None
    token: str | None = None
    cacert: Path | None = None
    config: Path | None = None

    def client(self) -> AdminClient:
        return admin_client(self.admin_url, self.token, self.config, self.cacert)


ADMIN = AdminTarget()  # the default an admin_command's ``admin`` parameter names; the options replace it


def admin_command(fn: F) -> F:
    """:func:`command` for a command whose last parameter is ``admin:
    AdminTarget``: its command line has ``--admin-url``, ``--token``,
    ``--cacert`` and ``--config`` in that parameter's place (one option set,
    written once, for every command that reaches the admin API)."""
    shown = inspect.signature(fn, eval_str=True)
    kind = inspect.Parameter.KEYWORD_ONLY
    options = [
        inspect.Parameter("admin_url", kind, default=AdminUrlOption, annotation=str | None),
        inspect.Parameter("token", kind, default=TokenOption, annotation=str | None),
        inspect.Parameter("cacert", kind, default=CaCertOption, annotation=Path | None),
        inspect.Parameter("config", kind, default=ConfigOption, annotation=Path | None),
    ]
    params = [p for p in shown.parameters.values() if p.name != "admin"] + options

    @functools.wraps(fn)
    def wrapper(*args: Any, admin_url: str | None = None, token: str | None = None,
                cacert: Path | None = None, config: Path | None = None, **kwargs: Any) -> Any:
        return fn(*args, admin=AdminTarget(admin_url, token, cacert, config), **kwargs)

    wrapper.__signature__ = shown.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": shown.return_annotation}
    return command(wrapper)  # type: ignore[return-value]


def agent_client(
    url: str | None, token: str | None, config: Path | None, poll_seconds: float, cacert: Path | None = None
) -> AgentClient:
    from askd.client import AgentClient, Discovery

    g = global_options()
    found = Discovery(config)
    base = found.url(url or g.url)
    return AgentClient(base, found.agent_token(token or g.token), poll_seconds=poll_seconds, ca_file=cacert or g.cacert)


def command(fn: F) -> F:
    """Wrap a command: any failure is one line on stderr and its exit code
    (the traceback only with --debug or ASKD_DEBUG=1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except Exception as err:
            if debug_enabled():
                traceback.print_exc()
            message, code = describe_error(err)
            eprint(f"askd: {message}")
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]
