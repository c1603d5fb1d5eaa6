"""``askd token``: mint tokens with the daemon's secret."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from askd import state, tokens
from askd.cli.common import ConfigOption, fail, settings

app = typer.Typer(help="Mint tokens for users, agents and admins.", no_args_is_help=True)


class Role(str, Enum):
    user = "user"
    agent = "agent"
    admin = "admin"


def secret_for(config: Path | None) -> str:
    """The configured secret, else the state directory's (created if missing,
    so a token minted before the first ``askd serve`` still works after)."""
    s = settings(config)
    if s.auth.secret is not None:
        return s.auth.secret.get_secret_value()
    return state.load_or_create_secret(s.state_dir)


@app.command("issue")
def issue(
    role: Role = typer.Option(..., "--role", help="user, agent or admin."),
    sub: str | None = typer.Option(None, "--sub", help="Subject: the user id (required for role user)."),
    ttl: float | None = typer.Option(None, "--ttl", help="Lifetime in seconds (default: no expiry)."),
    config: Path | None = ConfigOption,
) -> None:
    """Print a signed token."""
    if role is Role.user and not sub:
        fail("a user token needs --sub USER_ID", 2)
    if ttl is not None and ttl <= 0:
        fail("--ttl must be a positive number of seconds", 2)
    typer.echo(tokens.issue(secret_for(config), role.value, sub, ttl))
