"""``askd connections``: the live WebSocket connections."""

from __future__ import annotations

import typer

from askd.cli.clients import ADMIN, AdminTarget, JsonOption, admin_command
from askd.cli.common import print_json
from askd.cli.output import ago, table

app = typer.Typer(help="See the users' live WebSocket connections.", no_args_is_help=True)


@app.command("list")
@admin_command
def list_(
    user: str | None = typer.Option(None, "--user", help="Only this user's connections."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """List open connections with their subscriptions."""
    with admin.client() as client:
        conns = client.connections(user=user)
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
