"""The ``teams`` webhook body: a Teams message with one Adaptive Card, as a
Teams Workflows flow ("Post to a channel when a webhook request is
received") posts it. The card holds what the ``slack`` body does: whom the
agent waits for, the question(s) or the action, and ``Action.OpenUrl``
buttons: one per option of a one-question ask (its answer link), Approve and
Deny for an action, and *Open*; without answer links, one button opens the
inbox. Teams' TextBlocks take a subset of Markdown, so question text goes in
as it was written.
"""

from __future__ import annotations

import json
from typing import Any

from askd.protocol import visible

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.4"  # Action.OpenUrl's style (positive, destructive) came in 1.2; Teams renders 1.4
# A Teams message is at most 28 KB: each text is cut well below that.
TEXT_CHARS = 3000
TITLE_CHARS = 75
MAX_OPTIONS = 5  # option buttons, as Slack's; Open makes six


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": _cut(text, TEXT_CHARS), "wrap": True, **style}


def _open(title: str, url: str, style: str | None = None) -> dict[str, Any]:
    return {"type": "Action.OpenUrl", "title": _cut(visible.reveal(title), TITLE_CHARS), "url": url, **({"style": style} if style else {})}


def _intro(ev: dict[str, Any]) -> str:
    who = str(ev.get("userId") or ", ".join(ev.get("to") or ev.get("users") or ()))
    until = str(ev["expiresAt"])[11:16]
    what = "to approve an action" if "action" in ev else "to answer"
    reminder = "Reminder: " if ev.get("reminder") else ""  # reminder k (protocol section 20)
    return f"{reminder}An agent is waiting for **{who}** {what} (session {ev['sessionId']}, until {until} UTC)."


def _action_body(ev: dict[str, Any]) -> list[dict[str, Any]]:
    """An action to approve (protocol section 17): its name and summary, preview,
    arguments (monospace) and the quorum's progress."""
    action = ev["action"]
    body = [_text(str(action.get("name", "")), weight="Bolder", size="Medium")]
    for key in ("summary", "preview"):
        value = action.get(key)
        if isinstance(value, str) and value:
            body.append(_text(value))
    # Indented for people to read, not the codec's compact form.
    arguments = json.dumps(action.get("arguments"), indent=2, ensure_ascii=False)
    body.append(_text(arguments, fontType="Monospace"))
    quorum, approvals = int(ev.get("quorum") or 1), ev.get("approvals") or []
    if quorum > 1:
        body.append(_text(f"{len(approvals)} of {quorum} approvals", isSubtle=True))
    return body


def _question_body(q: dict[str, Any]) -> list[dict[str, Any]]:
    body = []
    header = q.get("header")
    if isinstance(header, str) and header:
        body.append(_text(header, weight="Bolder"))
    body.append(_text(str(q.get("question", ""))))
    lines = []
    for o in q.get("options") or []:
        if isinstance(o, dict):
            desc = o.get("description")
            lines.append(f"- **{o.get('label', '')}**" + (f": {desc}" if isinstance(desc, str) and desc else ""))
    if lines:
        body.append(_text("\n".join(lines)))
    return body


def _actions(ev: dict[str, Any], channel: dict[str, Any] | None) -> list[dict[str, Any]]:
    if channel is None:
        return [_open("Open the askd inbox", ev["url"])]
    if "approve" in channel:  # an action: its page opens with that decision chosen (a tap decides nothing)
        return [_open("Approve", channel["approve"], "positive"), _open("Deny", channel["deny"], "destructive"), _open("Open", channel["open"])]
    # One-tap answers exist only for a one-question ask (links.one_tap_labels).
    buttons = [_open(o["label"], o["url"]) for o in channel["options"][:MAX_OPTIONS]]
    return [*buttons, _open("Open", channel["open"])]


def teams_message(ev: dict[str, Any], channel: dict[str, Any] | None) -> dict[str, Any]:
    """The ``teams`` body; ``channel`` is the channel's answer links
    (askd.channels.links.link_set), or None without ``public_url``. What a
    person reads shows its hidden characters as marks, under a warning
    (protocol section 17)."""
    body = [_text(_intro(ev), isSubtle=True)]
    if visible.shows_hidden(ev):
        body.append(_text(visible.WARNING, weight="Bolder", color="Attention"))
    ev = visible.revealed(ev)
    if "action" in ev:
        body += _action_body(ev)
    for q in ev.get("questions") or ():
        body += _question_body(q)
    card = {"$schema": SCHEMA, "type": "AdaptiveCard", "version": VERSION, "body": body, "actions": _actions(ev, channel)}
    return {"type": "message", "attachments": [{"contentType": CARD_TYPE, "contentUrl": None, "content": card}]}
