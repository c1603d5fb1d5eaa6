"""Slack's messages, in Block Kit and mrkdwn: the ``slack`` webhook format
(protocol section 12: ``slack_blocks``, whose ``text`` is ``slack_text``)
and the Slack app's messages built on it (protocol section 20), with what
each becomes once its question ends.

A question's message is the webhook's (its intro, the question(s), URL
buttons); a direct message's buttons name its recipient. An escalation
step or a reminder replies in the channel message's thread with a line and
the channel's buttons. When the question ends, every message loses its
buttons and gains a line that says how it ended: who answered what, or that
it was declined, timed out or withdrawn (``ended``). What an edit starts
from is the message without its buttons (``kept``), kept in the store with
the message's ``ts``, since an ended question holds its text no longer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from askd.channels.slack.mrkdwn import escape, to_mrkdwn
from askd.core.lifecycle import WITHDRAW_ERROR, Status
from askd.protocol import codec, visible

if TYPE_CHECKING:
    from askd.core import Request

#: The line above a text with hidden characters (askd.protocol.visible), in mrkdwn.
HIDDEN_WARNING = f":warning: *{visible.WARNING}*"

# Block Kit's limits: a section's text, a button's text, buttons shown.
SECTION_CHARS = 3000
BUTTON_CHARS = 75
MAX_BUTTONS = 5


def _intro(ev: dict[str, Any]) -> str:
    """Whom the agent waits for, in which session, until when (mrkdwn)."""
    who = str(ev.get("userId") or ", ".join(ev.get("to") or ev.get("users") or ()))
    until = str(ev["expiresAt"])[11:16]
    what = "to approve an action" if "action" in ev else "to answer"
    return ("Reminder: " if ev.get("reminder") else "") + f"An agent is waiting for *{escape(who)}* {what} (session {escape(ev['sessionId'])}, until {until} UTC)"


def _action_lines(ev: dict[str, Any]) -> list[str]:
    """An action to approve (protocol section 17) in mrkdwn: its name and summary,
    its preview, its arguments as JSON, the quorum's progress."""
    action = ev["action"]
    summary = action.get("summary")
    lines = [f"*{escape(str(action.get('name', '')))}*" + (f": {to_mrkdwn(summary)}" if isinstance(summary, str) and summary else "")]
    preview = action.get("preview")
    if isinstance(preview, str) and preview:
        lines.append(to_mrkdwn(preview))
    # Indented for people to read, not the codec's compact form.
    arguments = json.dumps(action.get("arguments"), indent=2, ensure_ascii=False)
    # Cut inside the block, so a long one still ends it (as mrkdwn.to_mrkdwn writes one).
    lines.append("```\n" + _cut(escape(arguments), SECTION_CHARS - 8) + "\n```")
    quorum, approvals = int(ev.get("quorum") or 1), ev.get("approvals") or []
    if quorum > 1:
        lines.append(f"{len(approvals)} of {quorum} approvals")
    return lines


def _question_line(q: dict[str, Any]) -> str:
    header = q.get("header")
    line = f"*{escape(header)}*: " if isinstance(header, str) and header else ""
    return line + to_mrkdwn(str(q.get("question", "")))  # Markdown, as far as mrkdwn goes


def _labels(q: dict[str, Any]) -> list[str]:
    return [str(o.get("label", "")) for o in q.get("options") or [] if isinstance(o, dict)]


def slack_text(ev: dict[str, Any], open_url: str | None = None) -> str:
    """One short message for a chat incoming webhook (Slack's mrkdwn); also
    the Block Kit message's ``text``, which notifications show. Hidden
    characters show as marks, under a warning (protocol section 17)."""
    lines = [_intro(ev) + ":"]
    if visible.shows_hidden(ev):
        lines.append(HIDDEN_WARNING)
    ev = visible.revealed(ev)
    if "action" in ev:
        lines.append("• " + _action_lines(ev)[0])
    for q in ev.get("questions") or ():
        line = _question_line(q)
        labels = _labels(q)
        if labels:
            line += " (" + " / ".join(escape(label) for label in labels) + ")"
        lines.append("• " + line)
    if open_url is not None:
        lines.append(f"<{open_url}|{'Open' if 'action' in ev else 'Answer'}>")
    else:
        lines.append(f"<{ev['url']}|Open the askd inbox to answer>")
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _button(label: str, url: str, action_id: str, style: str | None = None) -> dict[str, Any]:
    text = {"type": "plain_text", "text": _cut(visible.reveal(label), BUTTON_CHARS), "emoji": False}
    return {"type": "button", "text": text, "url": url, "action_id": action_id, **({"style": style} if style else {})}


def slack_blocks(ev: dict[str, Any], channel: dict[str, Any] | None) -> dict[str, Any]:
    """The ``slack`` body: a Block Kit message an incoming webhook takes with
    no Slack app. The question(s) and their options as sections, then URL
    buttons: one per option of a one-question ask (the first
    ``MAX_BUTTONS``) and *Open* (the question link); ``channel`` is the
    answer links for the channel (askd.channels.links.link_set), or None without
    ``public_url``: then one button opens the inbox. What a person reads
    shows its hidden characters as marks, under a warning (protocol section 17)."""
    intro = {"type": "mrkdwn", "text": _cut(_intro(ev) + ".", SECTION_CHARS)}
    blocks: list[dict[str, Any]] = [{"type": "section", "text": intro}]
    text_ev, ev = ev, visible.revealed(ev)
    if visible.shows_hidden(text_ev):
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": HIDDEN_WARNING}})
    if "action" in ev:
        for line in _action_lines(ev):
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(line, SECTION_CHARS)}})
    for q in ev.get("questions") or ():
        text = _question_line(q)
        for o in q.get("options") or []:
            if isinstance(o, dict):
                desc = o.get("description")
                text += f"\n• {escape(str(o.get('label', '')))}" + (f": {to_mrkdwn(desc)}" if isinstance(desc, str) and desc else "")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(text, SECTION_CHARS)}})
    if channel is None:
        buttons = [_button("Open the askd inbox", ev["url"], "open")]
    elif "approve" in channel:  # an action: its page opens with that decision chosen (a tap decides nothing)
        buttons = [
            _button("Approve", channel["approve"], "approve", "primary"),
            _button("Deny", channel["deny"], "deny", "danger"),
            _button("Open", channel["open"], "open"),
        ]
    else:
        buttons = [_button(o["label"], o["url"], f"option-{i}") for i, o in enumerate(channel["options"][:MAX_BUTTONS])]
        buttons.append(_button("Open", channel["open"], "open"))
    blocks.append({"type": "actions", "elements": buttons})
    return {"text": slack_text(text_ev, channel["open"] if channel else None), "blocks": blocks}


Message = dict[str, Any]  # {"text": ..., "blocks": [...]}: chat.postMessage's and chat.update's arguments


def _section(text: str) -> dict[str, Any]:
    limit = SECTION_CHARS
    return {"type": "section", "text": {"type": "mrkdwn", "text": text if len(text) <= limit else text[: limit - 1] + "…"}}


def question(ev: dict[str, Any], links: dict[str, Any] | None, note: str | None = None) -> Message:
    """The whole question as one message (a channel's, or a direct
    message's with ``links`` naming its recipient); ``note`` (mrkdwn) comes
    first: an escalation step's or a reminder's word."""
    msg = slack_blocks(ev, links)
    if note is not None:
        msg = {"text": f"{note}\n{msg['text']}", "blocks": [_section(note), *msg["blocks"]]}
    return msg


def reply(ev: dict[str, Any], links: dict[str, Any] | None, note: str) -> Message:
    """A reply in the channel message's thread: ``note`` and the buttons."""
    buttons = slack_blocks(ev, links)["blocks"][-1]
    return {"text": note, "blocks": [_section(note), buttons]}


def escalation_note(step: int, newcomers: list[str]) -> str:
    who = ", ".join(f"*{escape(u)}*" for u in newcomers) or "no one new"
    return f"Escalated (step {step}): now also asking {who}."


def reminder_note(k: int, users: list[str]) -> str:
    who = ", ".join(f"*{escape(u)}*" for u in users)
    return f"Reminder {k}: still waiting for an answer" + (f" from {who}." if who else ".")


def kept(msg: Message) -> str:
    """What the store keeps of a message posted: itself without its
    buttons, as JSON (what :func:`ended` starts from)."""
    blocks = [b for b in msg["blocks"] if b.get("type") != "actions"]
    return codec.dumps({"text": msg["text"], "blocks": blocks}).decode()


def _value(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _answer_lines(answers: dict[str, Any] | None) -> list[str]:
    # A question's text (and an option's label) as the message showed it: hidden characters marked.
    return [f"• *{escape(visible.reveal(str(q)))}*: {escape(visible.reveal(_value(v)))}" for q, v in (answers or {}).items()]


def outcome(req: Request) -> str:
    """How ``req`` ended, in mrkdwn: who answered what, or that it was
    declined, timed out or withdrawn."""
    by = f" by *{escape(req.answered_by)}*" if req.answered_by else ""
    if req.status is Status.ANSWERED:
        if req.approval is not None:
            return f":white_check_mark: *Approved*{by}."
        return "\n".join([f":white_check_mark: *Answered*{by}:", *_answer_lines(req.answers)])
    if req.status is Status.DECLINED:
        word = "Denied" if req.approval is not None else "Declined"
        return f":no_entry_sign: *{word}*{by}" + (f": {escape(req.reason)}" if req.reason else ".")
    if req.status is Status.TIMEOUT:
        if req.defaulted:
            return "\n".join([":hourglass: *Timed out*; the default answer stood:", *_answer_lines(req.answers)])
        return ":hourglass: *Timed out* with no answer."
    if req.error == WITHDRAW_ERROR:
        return ":leftwards_arrow_with_hook: *Withdrawn* by the agent."
    return ":leftwards_arrow_with_hook: *Cancelled* with its session."


def ended(body: str, req: Request) -> Message:
    """A message as its question's end leaves it: what was kept of it (no
    buttons) and the outcome."""
    was = codec.loads(body)
    line = outcome(req)
    return {"text": line, "blocks": [*was["blocks"], _section(line)]}
