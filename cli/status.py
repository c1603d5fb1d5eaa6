"""``askd status``: is the daemon up, and what is it doing."""

from __future__ import annotations

import typer

from askd.cli.clients import ADMIN, AdminTarget, JsonOption, admin_command
from askd.cli.common import EXIT_ERROR, print_json
from askd.cli.output import duration, plural
from askd.client.errors import DaemonUnavailable


@admin_command
def status(
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Say whether the daemon is up, its version, ports, uptime and counts (exit 1 when down)."""
    with admin.client() as client:
        try:
            client.health()
        except DaemonUnavailable as err:
            if as_json:
                print_json({"up": False, "adminUrl": client.url, "reason": err.reason})
            else:
                typer.echo(f"askd is not running (nothing answers at {client.url}: {err.reason}).")
            raise typer.Exit(EXIT_ERROR) from None
        stats = client.stats()
    if as_json:
        print_json({"up": True, "adminUrl": client.url, **stats})
        return
    host = client.url.rsplit(":", 1)[0]
    typer.echo(f"askd {stats['version']} is up (for {duration(stats['uptimeSeconds'])})")
    typer.echo(f"  public   {host}:{stats['port']}   (agents, WebSocket, web page)")
    if stats.get("publicUrl"):  # what people open: public_url behind a proxy, else the listener
        typer.echo(f"  inbox    {stats['publicUrl']}")
    typer.echo(f"  admin    {client.url}")
    degraded = "  (DEGRADED: it refuses writes)" if stats.get("storeStatus") == "degraded" else ""
    typer.echo(f"  node     {stats['node']}   store {stats['store']}{degraded}")
    typer.echo(f"  clients  {plural(stats['connections'], 'connection')} of {plural(stats['users'], 'user')}")
    typer.echo(
        f"  questions {stats['pending']} pending, {stats['asked']} asked, {stats['answered']} answered,"
        f" {stats['timedOut']} timed out, {stats['cancelled']} cancelled, {stats.get('declined', 0)} declined"
    )
