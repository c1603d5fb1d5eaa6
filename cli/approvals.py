"""``askd pending approve`` and ``askd pending deny``: an admin approves or
denies an action (protocol section 17) as a person in its audience would."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from askd.cli.clients import ADMIN, AdminTarget, admin_command
from askd.cli.common import EXIT_USAGE, ReplyJsonOption, fail, reply_ack, request_argument, session_argument
from askd.cli.output import QuestionMarkdown, terminal_safe
from askd.cli.time import declining
from askd.protocol import codec


def arguments_from(value: str) -> dict[str, Any]:
    """``--arguments``: a JSON object, or ``@FILE`` (``@-``: stdin) holding one."""
    source = "--arguments"
    if value.startswith("@"):
        name = value[1:]
        source = "stdin" if name == "-" else name
        try:
            value = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except OSError as err:
            fail(f"cannot read --arguments file {name}: {err.strerror or err}", EXIT_USAGE)
    try:
        parsed = codec.loads(value)
    except ValueError as err:
        fail(f"{source} is not valid JSON: {err}", EXIT_USAGE)
    if not isinstance(parsed, dict):
        fail(f'{source} must be a JSON object, e.g. \'{{"env": "staging"}}\'', EXIT_USAGE)
    return parsed


def show_action(out: Console, item: dict[str, Any]) -> None:
    """``askd pending show`` of an action: what will run, why, with what,
    the preview, and the quorum's progress."""
    action = item["action"]
    out.print(Text(terminal_safe(f"Approve {action['name']}?"), style="bold reverse"))
    if action.get("summary"):
        out.print(QuestionMarkdown(action["summary"]))
    out.print(Text("Arguments:", style="bold"))
    # Indented for people to read, not the codec's compact form.
    out.print(Text(terminal_safe(json.dumps(action.get("arguments", {}), indent=2, ensure_ascii=False))))
    if action.get("preview"):
        out.print(Text("Preview:", style="bold"))
        out.print(QuestionMarkdown(action["preview"]))
    given = item.get("approvals") or []
    who = ", ".join(str(a.get("by") or "admin") for a in given)
    out.print(f"{len(given)} of {item.get('quorum', 1)} approvals" + (f": {terminal_safe(who)}" if who else ""))
    offers = [text for key, text in (("editable", "arguments editable"), ("allowAlways", "approve always offered")) if action.get(key)]
    if offers:
        out.print(", ".join(offers))


@admin_command
def approve(
    session: str = session_argument("action"),
    request: str = request_argument("action"),
    arguments: str | None = typer.Option(
        None, "--arguments", help="Approve with edited arguments: a JSON object or @FILE (editable actions only)."
    ),
    always: bool = typer.Option(False, "--always", help="Approve always (only when the action offers it)."),
    as_json: bool = ReplyJsonOption,
    admin: AdminTarget = ADMIN,
) -> None:
    """Approve a pending action as a person in its audience would (one
    approval, by the admin token's sub; a quorum may need more)."""
    edited = arguments_from(arguments) if arguments is not None else None
    with admin.client() as client:
        ack = client.approve(session, request, edited, "always" if always else None)
    k, n = ack.get("approvals", 1), ack.get("needed", 1)
    done = "it is approved" if k >= n else f"{n - k} more needed"
    reply_ack(as_json, "Approved", session, request, ack, f": {k} of {n} approvals, {done}")


deny = declining(
    "action",
    "Denied",
    """Deny a pending action (the admin's decline): one denial ends it,
    whatever its quorum.""",
)
