"""Webhook deliveries (spec E, J): the body, its signatures, and one attempt.

Shared by the daemon's webhook channel (``askd.channels.webhook_channel``,
which the delivery worker queues and retries) and ``askd notify test``
(one attempt, reported to the terminal).
A webhook URL often holds a secret in its path (Slack's do), so only
:func:`redact_url` of it is ever printed or logged.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
from standardwebhooks import Webhook

from askd import __version__
from askd.core.events import encode
from askd.protocol import visible
from askd.channels.mrkdwn import escape, to_mrkdwn
from askd.channels.teams import teams_message

EVENT = "question.asked"
ID_HEADER, TIMESTAMP_HEADER, STANDARD_SIGNATURE_HEADER = "webhook-id", "webhook-timestamp", "webhook-signature"
EXCERPT_CHARS = 200


def inbox_url(base: str, session_id: str) -> str:
    """The inbox page at one session; no token (the reader signs in)."""
    return f"{base.rstrip('/')}/?{urlencode({'session': session_id})}"


def redact_url(url: str) -> str:
    """``https://hooks.slack.com/…``: scheme and host only, never the path
    or query, where webhook URLs keep their secret."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/…"


def event(
    description: dict[str, Any], url: str, users: list[str] | None = None, links: dict[str, Any] | None = None,
    *, reminder: int = 0,
) -> dict[str, Any]:
    """The ``json`` body from a pending question as listings describe it
    (``Request.describe()``); metadata is the agent's and stays out.
    ``users`` is the audience resolved (sorted); ``userId`` is there only
    for a question asked of one user, ``escalation`` after a step (spec H),
    ``reminder`` (k, from 1) in a reminder (section 20);
    ``links`` (answer links by user id, askd.channels.links) only with ``public_url``."""
    out: dict[str, Any] = {"event": EVENT}
    if "userId" in description:
        out["userId"] = description["userId"]
    to = description.get("to", [description.get("userId")])
    out.update(to=to, users=users if users is not None else [u for u in to if not u.startswith("group:")])
    if description.get("escalations"):
        out["escalation"] = description["escalations"]
    if reminder:  # reminder k of the question (section 20), from 1
        out["reminder"] = reminder
    return {
        **out,
        "sessionId": description["sessionId"],
        "requestId": description["requestId"],
        # An action to approve (section 17) has no questions: its action,
        # quorum and approvals so far instead (its links: approve, deny, open).
        **{k: description[k] for k in ("questions", "action", "quorum", "approvals") if k in description},
        "createdAt": description["createdAt"],
        "expiresAt": description["expiresAt"],
        "url": url,
        **({"links": links} if links is not None else {}),
    }


def _intro(ev: dict[str, Any]) -> str:
    """Whom the agent waits for, in which session, until when (mrkdwn)."""
    who = str(ev.get("userId") or ", ".join(ev.get("to") or ev.get("users") or ()))
    until = str(ev["expiresAt"])[11:16]
    what = "to approve an action" if "action" in ev else "to answer"
    return ("Reminder: " if ev.get("reminder") else "") + f"An agent is waiting for *{escape(who)}* {what} (session {escape(ev['sessionId'])}, until {until} UTC)"


def _action_lines(ev: dict[str, Any]) -> list[str]:
    """An action to approve (section 17) in mrkdwn: its name and summary,
    its preview, its arguments as JSON, the quorum's progress."""
    action = ev["action"]
    summary = action.get("summary")
    lines = [f"*{escape(str(action.get('name', '')))}*" + (f": {to_mrkdwn(summary)}" if isinstance(summary, str) and summary else "")]
    preview = action.get("preview")
    if isinstance(preview, str) and preview:
        lines.append(to_mrkdwn(preview))
    arguments = json.dumps(action.get("arguments"), indent=2, ensure_ascii=False)
    # Cut inside the block, so a long one still ends it (as mrkdwn.py writes one).
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


#: The line above a text with hidden characters (askd.protocol.visible), in mrkdwn.
HIDDEN_WARNING = f":warning: *{visible.WARNING}*"

# Block Kit's limits: a section's text, a button's text, buttons shown.
SECTION_CHARS = 3000
BUTTON_CHARS = 75
MAX_BUTTONS = 5


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


def render(fmt: str, ev: dict[str, Any], channel: dict[str, Any] | None = None) -> bytes:
    """The raw body to POST (and to sign) in ``fmt``: ``json``, or ``slack``
    or ``teams`` with the channel's answer links (``channel``, see
    :func:`slack_blocks` and :func:`askd.channels.teams.teams_message`)."""
    if fmt == "slack":
        return encode(slack_blocks(ev, channel))
    if fmt == "teams":
        return encode(teams_message(ev, channel))
    return encode(ev)


def standard_key(secret: str) -> str:
    """The secret as a Standard Webhooks receiver configures it:
    ``whsec_`` and the base64 of its UTF-8 bytes."""
    return "whsec_" + base64.b64encode(secret.encode()).decode()


def message_id() -> str:
    """A new ``webhook-id``: one per delivery, the same on each retry of it."""
    return f"msg_{uuid.uuid4().hex}"


def headers(body: bytes, secret: str | None, msg_id: str | None = None, at: float | None = None) -> dict[str, str]:
    """The headers of one attempt: the Standard Webhooks ``webhook-id`` and
    ``webhook-timestamp`` (``at``, default now), and with a secret
    ``webhook-signature`` (signed by the ``standardwebhooks`` package): it
    covers the id and the timestamp too, so a replay is refused once the
    timestamp is old (the former ``X-Askd-Signature`` covered the body only
    and replayed forever: removed)."""
    when = datetime.fromtimestamp(int(time.time() if at is None else at), tz=timezone.utc)
    msg_id = msg_id or message_id()
    out = {
        "Content-Type": "application/json",
        "User-Agent": f"askd/{__version__}",
        ID_HEADER: msg_id,
        TIMESTAMP_HEADER: str(int(when.timestamp())),
    }
    if secret:
        # bytes: the key as it is (a str would be read as whsec_ base64).
        out[STANDARD_SIGNATURE_HEADER] = Webhook(secret.encode()).sign(msg_id, when, body.decode("utf-8"))
    return out


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one POST got: the receiver's status and an excerpt of its
    answer, or ``error`` when no answer came (refused, timed out)."""

    status: int | None
    reason: str = ""
    excerpt: str = ""
    error: str | None = None
    retry_after: float | None = None  # seconds, from a 429/503 Retry-After
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        """Connection errors, timeouts, 5xx and 429 are worth another try;
        any other answer (a 4xx, a redirect) will not change by itself."""
        return self.status is None or self.status >= 500 or self.status == 429

    def describe(self) -> str:
        if self.status is None:
            return str(self.error)
        text = f"{self.status} {self.reason}".rstrip()
        return f"{text}: {self.excerpt!r}" if self.excerpt else text


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_text(err: Exception, timeout: float) -> str:
    if isinstance(err, (httpx.TimeoutException, TimeoutError)):
        return f"no answer within {timeout:g} s"
    if isinstance(err, httpx.ConnectError):
        return f"cannot connect ({str(err) or 'connection failed'})"
    # Never the exception's own text for the rest: some carry the URL.
    return f"the connection failed ({type(err).__name__})"


async def post(
    client: httpx.AsyncClient, url: str, body: bytes, secret: str | None, timeout: float, msg_id: str | None = None
) -> Attempt:
    """POST ``body`` once; never raises for a network failure. ``timeout``
    bounds the whole attempt, however slowly a receiver trickles bytes.
    ``msg_id``: the delivery's ``webhook-id`` (retries pass the same)."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("POST", url, content=body, headers=headers(body, secret, msg_id), timeout=timeout) as response:
                head = b""
                async for chunk in response.aiter_bytes():  # only the start: a receiver's answer may be huge
                    head += chunk
                    if len(head) >= 4 * EXCERPT_CHARS:
                        break
    except (httpx.HTTPError, TimeoutError, OSError) as err:
        return Attempt(None, error=_error_text(err, timeout), elapsed=time.monotonic() - started)
    return Attempt(
        response.status_code,
        response.reason_phrase,
        head.decode("utf-8", "replace")[:EXCERPT_CHARS].strip(),
        retry_after=_retry_after(response.headers.get("Retry-After")),
        elapsed=time.monotonic() - started,
    )
