"""``askd token``: mint tokens with the daemon's secret."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from askd import state, tokens
from askd.cli.clients import AdminUrlOption, CaCertOption, TokenOption, admin_client, command
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


# A user token is a person's key to their inbox, pasted into browsers: it
# ends by default. Agent and admin tokens live in configuration: they do not.
USER_TTL_SECONDS = 30 * 86400.0


@app.command("issue")
def issue(
    role: Role = typer.Option(..., "--role", help="user, agent or admin."),
    sub: str | None = typer.Option(None, "--sub", help="Subject: the user id (required for role user)."),
    ttl: float | None = typer.Option(
        None, "--ttl", help="Lifetime in seconds; 0: no expiry. Default: 30 days (2592000) for user tokens, none for others."
    ),
    config: Path | None = ConfigOption,
) -> None:
    """Print a signed token."""
    if role is Role.user and not sub:
        fail("a user token needs --sub USER_ID", 2)
    if ttl is not None and ttl < 0:
        fail("--ttl must be a number of seconds >= 0 (0: no expiry)", 2)
    if ttl is None and role is Role.user:
        ttl = USER_TTL_SECONDS
    try:
        token = tokens.issue(secret_for(config), role.value, sub, ttl or None)
    except ValueError as err:
        fail(str(err), 2)
    typer.echo(token)


@app.command("revoke-all")
@command
def revoke_all(
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Refuse every token issued until now, of every role, on every node, at once.

    Open WebSockets that used one are closed (4001). Mint new tokens for
    agents and people afterwards; `askd open` and the CLI mint their own.
    """
    with admin_client(admin_url, token, config, cacert) as admin:
        at = admin.revoke_all()
    typer.echo(f"Tokens issued before {at:.3f} (seconds since the epoch) are refused from now on.")
