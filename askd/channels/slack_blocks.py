"""The Slack app's messages (spec R): Block Kit, as the ``slack`` webhook
format builds them (spec J, ``webhook.slack_blocks``), and what each
becomes once its question ends.

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

from askd.channels import webhook
from askd.channels.mrkdwn import escape
from askd.core.lifecycle import WITHDRAW_ERROR, Status
from askd.protocol.visible import reveal

if TYPE_CHECKING:
    from askd.core import Request

Message = dict[str, Any]  # {"text": ..., "blocks": [...]}: chat.postMessage's and chat.update's arguments


def _section(text: str) -> dict[str, Any]:
    limit = webhook.SECTION_CHARS
    return {"type": "section", "text": {"type": "mrkdwn", "text": text if len(text) <= limit else text[: limit - 1] + "…"}}


def question(ev: dict[str, Any], links: dict[str, Any] | None, note: str | None = None) -> Message:
    """The whole question as one message (a channel's, or a direct
    message's with ``links`` naming its recipient); ``note`` (mrkdwn) comes
    first: an escalation step's or a reminder's word."""
    msg = webhook.slack_blocks(ev, links)
    if note is not None:
        msg = {"text": f"{note}\n{msg['text']}", "blocks": [_section(note), *msg["blocks"]]}
    return msg


def reply(ev: dict[str, Any], links: dict[str, Any] | None, note: str) -> Message:
    """A reply in the channel message's thread: ``note`` and the buttons."""
    buttons = webhook.slack_blocks(ev, links)["blocks"][-1]
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
    return json.dumps({"text": msg["text"], "blocks": blocks}, ensure_ascii=False, separators=(",", ":"))


def _value(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _answer_lines(answers: dict[str, Any] | None) -> list[str]:
    # A question's text (and an option's label) as the message showed it: hidden characters marked.
    return [f"• *{escape(reveal(str(q)))}*: {escape(reveal(_value(v)))}" for q, v in (answers or {}).items()]


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
    was = json.loads(body)
    line = outcome(req)
    return {"text": line, "blocks": [*was["blocks"], _section(line)]}
