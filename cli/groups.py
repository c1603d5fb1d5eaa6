"""``askd group``: named sets of user ids a question may be asked of
(``"to": ["group:G"]``)."""

from __future__ import annotations

from pathlib import Path

import typer

from askd.cli.clients import AdminUrlOption, CaCertOption, JsonOption, TokenOption, admin_client, command
from askd.cli.common import ConfigOption, print_json
from askd.cli.output import table

app = typer.Typer(help="Keep groups of users to ask questions of (to: group:NAME).", no_args_is_help=True)


@app.command("set")
@command
def set_(
    group: str = typer.Argument(..., help="The group's name."),
    members: list[str] = typer.Argument(None, help="Its members' user ids (replacing any before)."),
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Make a group, or replace its members. Pending questions asked of it
    reach the new members at once; removed members lose them."""
    with admin_client(admin_url, token, config, cacert) as admin:
        stored = admin.set_group(group, members or [])
    if as_json:
        print_json({"group": group, "members": stored})
    else:
        typer.echo(f"Group {group}: {', '.join(stored) or '(no members)'}.")


@app.command("list")
@command
def list_(
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """List the groups and their members."""
    with admin_client(admin_url, token, config, cacert) as admin:
        groups = admin.groups()
    if as_json:
        print_json(groups)
        return
    if not groups:
        typer.echo("No groups.")
        return
    table(["GROUP", "MEMBERS"], ([g["group"], ", ".join(g["members"]) or "-"] for g in groups))


@app.command("delete")
@command
def delete(
    group: str = typer.Argument(..., help="The group to delete."),
    as_json: bool = JsonOption,
    admin_url: str | None = AdminUrlOption,
    token: str | None = TokenOption,
    cacert: Path | None = CaCertOption,
    config: Path | None = ConfigOption,
) -> None:
    """Delete a group (its members lose the pending questions asked of it)."""
    with admin_client(admin_url, token, config, cacert) as admin:
        admin.delete_group(group)
    if as_json:
        print_json({"deleted": True})
    else:
        typer.echo(f"Deleted group {group}.")
