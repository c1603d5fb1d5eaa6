"""``askd connections``: the live WebSocket connections."""

from __future__ import annotations

from pathlib import Path

import typer

from askd.cli.clients import AdminUrlOption, CaCertOption, JsonOption, TokenOption, admin_client, command
from askd.cli.common import ConfigOption, print_json
from askd.cli.output import ago, table

app = typer.Typer(help="See the users' live WebSocket connections.", no_args_is_help=True)


@app.command("list")
@command
def list_(
    user: str | None = typer.Option(None, "--user", help="Only this user's connections."),
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """List open connections with their subscriptions."""
    with admin_client(admin_url, token, config, cacert) as admin:
        conns = admin.connections(user=user)
    if as_json:
        print_json(conns)
        return
    if not conns:
        typer.echo("No connections.")
        return
    table(
        ["CONNECTION", "USER", "SUBSCRIPTIONS", "CONNECTED", "REMOTE", "NODE"],
        (
            [c["connectionId"], c["userId"], ", ".join(c["subscriptions"]) or "-", ago(c["connectedAt"]), c["remote"], c.get("node", "-")]
            for c in conns
        ),
        no_wrap=("CONNECTION",),
    )
