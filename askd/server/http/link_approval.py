"""An action to approve (protocol section 17) on its answer-link page: what
the page shows of it, the decision a sent form makes, and how it ended
(``link_page.py`` serves all three).

A link's option names the decision its page opens with (``links.APPROVE``,
``links.DENY``; none: both offered); only the page's ``POST`` decides, so a
chat app or mail scanner fetching the link approves nothing. The page
approves the arguments as asked: editing them is the inbox's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from askd.channels import links
from askd.core import Request, Status
from askd.protocol import visible
from askd.web import markdown

APPROVE, ALWAYS, DECLINE = "approve", "always", "decline"  # the form's ``action`` values


def _md(text: Any) -> str:
    return markdown.shown(text) if isinstance(text, str) and text else ""


def approvers(req: Request, t: Callable[..., str]) -> list[str]:
    """Who approved so far, in order; an approval that names nobody (a shared
    link, an admin without a ``sub``) is "someone"."""
    assert req.approval is not None
    return [v.by if v.by is not None else t("approval.someone") for v in req.approval.votes]


def view_action(req: Request, user_id: str | None, t: Callable[..., str]) -> dict[str, Any]:
    """The pending action as the template shows it: name, summary and
    preview as safe Markdown, the arguments as formatted JSON (each as
    safe HTML, hidden characters as badges, ``hidden`` when there are any:
    protocol section 17), the quorum's progress, and whether this link's
    recipient approved it already. A link that names nobody cannot fill a
    seat of a quorum above 1 (protocol section 17), so its page offers no
    *Approve* there, only the way to the person's own inbox (``shared``)."""
    assert req.approval is not None
    action = req.ask_payload()["action"]
    quorum = req.approval.quorum
    names = approvers(req, t)
    progress = ""
    if quorum > 1 or names:
        progress = t("approval.progress", n=len(names), needed=quorum) + (": " + ", ".join(names) if names else "")
    return {
        "name": markdown.shown_plain(str(action.get("name", ""))),
        "summary": _md(action.get("summary")),
        "preview": _md(action.get("preview")),
        "arguments": markdown.shown_plain(json.dumps(req.approval.arguments, indent=2, ensure_ascii=False, sort_keys=False)),
        "hidden": visible.shows_hidden({"action": action}),
        "always": bool(action.get("allowAlways")),
        "progress": progress,
        "voted": req.approval.voted(user_id),
        "shared": user_id is None and quorum > 1,
    }


def choice_of(option: int | None) -> str:
    """The decision a link opens with: ``approve``, ``deny`` or ``""`` (both)."""
    return {links.APPROVE: "approve", links.DENY: "deny"}.get(option, "") if option is not None else ""


def outcome(req: Request, user_id: str | None, mine: bool, t: Callable[..., str]) -> str:
    """How an approval ended and who decided, never what: no deny reason and
    no edited arguments appear, since whoever holds the link may see it."""
    assert req.approval is not None
    by = req.answered_by
    own = user_id is not None and by == user_id
    if req.status is Status.ANSWERED:
        if mine:
            return t("approved.you")
        names = approvers(req, t)
        return t("approved.by", who=", ".join(names)) if names else t("approved")
    if req.status is Status.DECLINED:
        if mine or own:
            return t("denied.you")
        return t("denied.by", who=by) if by else t("denied")
    if req.status is Status.TIMEOUT:
        return t("approval.timeout")
    return t("approval.cancelled")


def action_name(req: Request) -> str:
    """The pending action's name, as asked."""
    return str(req.ask_payload()["action"].get("name", ""))


def decision_view(taken: dict[str, Any]) -> dict[str, Any]:
    """What a sent form decided, for the reply to it alone: ``key``, its
    words (approved once or always, or denied), the action's name as safe HTML,
    and whether a reason went with a denial (never the reason itself)."""
    key = {APPROVE: "taken.approve", ALWAYS: "taken.always", DECLINE: "taken.deny"}[taken["decision"]]
    return {"key": key, "name": markdown.shown_plain(taken["name"]), "reason": bool(taken.get("reason"))}
