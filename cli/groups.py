"""``askd group``: named sets of user ids a question may be asked of
(``"to": ["group:G"]``)."""

from __future__ import annotations

import typer

from askd.cli.clients import ADMIN, AdminTarget, JsonOption, admin_command
from askd.cli.common import print_json
from askd.cli.output import table

app = typer.Typer(help="Keep groups of users to ask questions of (to: group:NAME).", no_args_is_help=True)


@app.command("set")
@admin_command
def set_(
    group: str = typer.Argument(..., help="The group's name."),
    members: list[str] = typer.Argument(None, help="Its members' user ids (replacing any before)."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Make a group, or replace its members. Pending questions asked of it
    reach the new members at once; removed members lose them."""
    with admin.client() as client:
        stored = client.set_group(group, members or [])
    if as_json:
        print_json({"group": group, "members": stored})
    else:
        typer.echo(f"Group {group}: {', '.join(stored) or '(no members)'}.")


@app.command("list")
@admin_command
def list_(
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """List the groups and their members."""
    with admin.client() as client:
        groups = client.groups()
    if as_json:
        print_json(groups)
        return
    if not groups:
        typer.echo("No groups.")
        return
    table(["GROUP", "MEMBERS"], ([g["group"], ", ".join(g["members"]) or "-"] for g in groups))


@app.command("delete")
@admin_command
def delete(
    group: str = typer.Argument(..., help="The group to delete."),
    as_json: bool = JsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Delete a group (its members lose the pending questions asked of it)."""
    with admin.client() as client:
        client.delete_group(group)
    if as_json:
        print_json({"deleted": True})
    else:
        typer.echo(f"Deleted group {group}.")
