"""What a notice says, as JSON: the ``json`` webhook body (protocol section
12), which the Slack, Teams and e-mail messages are built from, and the
inbox page's address they link to.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

EVENT = "question.asked"


def inbox_url(base: str, session_id: str) -> str:
    """The inbox page at one session; no token (the reader signs in)."""
    return f"{base.rstrip('/')}/?{urlencode({'session': session_id})}"


def event(
    description: dict[str, Any], url: str, users: list[str] | None = None, links: dict[str, Any] | None = None,
    *, reminder: int = 0,
) -> dict[str, Any]:
    """The ``json`` body from a pending question as listings describe it
    (``Request.describe()``); metadata is the agent's and stays out.
    ``users`` is the audience resolved (sorted); ``userId`` is there only
    for a question asked of one user, ``escalation`` after an escalation step (protocol section 5),
    ``reminder`` (k, from 1) in a reminder (protocol section 20);
    ``links`` (answer links by user id, askd.channels.links) only with ``public_url``."""
    out: dict[str, Any] = {"event": EVENT}
    if "userId" in description:
        out["userId"] = description["userId"]
    to = description.get("to", [description.get("userId")])
    out.update(to=to, users=users if users is not None else [u for u in to if not u.startswith("group:")])
    if description.get("escalations"):
        out["escalation"] = description["escalations"]
    if reminder:  # reminder k of the question (protocol section 20), from 1
        out["reminder"] = reminder
    return {
        **out,
        "sessionId": description["sessionId"],
        "requestId": description["requestId"],
        # An action to approve (protocol section 17) has no questions: its action,
        # quorum and approvals so far instead (its links: approve, deny, open).
        **{k: description[k] for k in ("questions", "action", "quorum", "approvals") if k in description},
        "createdAt": description["createdAt"],
        "expiresAt": description["expiresAt"],
        "url": url,
        **({"links": links} if links is not None else {}),
    }
