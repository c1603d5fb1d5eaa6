"""The sample that ``askd notify test`` sends: one pending question made by
the core as an ask would be (it exists nowhere else, so its answer links
open askd's "not valid" page), sent once through each configured channel
(the webhook, the mail server), and a report of what each receiver
answered.

Shared by the daemon's ``POST /admin/v1/notify/test`` (the running daemon's
own settings, what people usually mean to test) and the command's fallback
when no daemon answers (the settings on this machine). The report is the
JSON of ``askd notify test --json`` and of the admin call alike.
"""

from __future__ import annotations

import uuid
from email.headerregistry import Address
from typing import Any

import httpx

from askd.channels import links
from askd.channels.event import event, inbox_url
from askd.channels.mail import message, smtp
from askd.channels.webhook import request
from askd.core import AskInput, Limits, Request
from askd.core.registry import Registry
from askd.protocol import codec

SAMPLE_SESSION = "askd-notify-test"

SAMPLE_QUESTION = {
    "question": "This is a test from `askd notify test`. Did it arrive?",
    "header": "askd test",
    "options": [{"label": "Yes"}, {"label": "No"}],
}

#: The webhook's part of the report (null without a webhook); ``payload`` is the body sent.
WEBHOOK_KEYS = ("url", "format", "signed", "status", "reason", "body", "error", "elapsedMs", "payload")


def sample_request(user: str, timeout: float) -> Request:
    """A pending question asked of ``user``, made by the core as an ask would be."""
    registry = Registry(Limits(question_timeout=timeout, max_timeout=timeout), new_id=lambda: f"test-{uuid.uuid4().hex[:12]}")
    req, _ = registry.prepare_ask(AskInput(SAMPLE_SESSION, user, [SAMPLE_QUESTION]))
    return req


async def run(
    n: Any, *, public_url: str | None, link_base: str, secret: str, user: str, email: str | None, timeout: float
) -> dict[str, Any]:
    """Send the sample through each channel ``n`` (a ``notify`` settings
    section) configures, once, and report: ``ok`` (every attempt made
    succeeded), the webhook's keys (``WEBHOOK_KEYS``, null without one),
    ``email`` (null without a mail server; sent only to ``email``) and
    ``links`` (the answer links, with ``public_url`` only)."""
    req = sample_request(user, timeout)
    description = req.describe()
    inbox = inbox_url(link_base, SAMPLE_SESSION)
    # Answer links only with public_url, as the daemon makes them.
    answer = links.link_set(public_url, secret, req, user) if public_url else None
    report: dict[str, Any] = {"ok": True, **dict.fromkeys(WEBHOOK_KEYS), "email": None, "links": answer}
    if n.webhook_url is not None:
        hook = await _webhook(n, description, inbox, {user: answer} if answer else None)
        report.update(hook, ok=hook["ok"])
    if n.smtp_url is not None:
        report["email"] = await _email(n, description, inbox, answer, email)
        report["ok"] = report["ok"] and report["email"]["ok"]
    return report


async def _webhook(n: Any, description: dict[str, Any], inbox: str, answer: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    target, secret = str(n.webhook_url), n.webhook_secret.get_secret_value() if n.webhook_secret else None
    ev = {**event(description, inbox, None, answer), "test": True}
    body = request.render(n.format, ev, next(iter(answer.values())) if answer else None)
    async with httpx.AsyncClient(follow_redirects=False) as client:
        got = await request.post(client, target, body, secret, n.timeout_seconds)
    return {
        "ok": got.ok,
        "url": request.redact_url(target),
        "format": n.format,
        "signed": secret is not None,
        "status": got.status,
        "reason": got.reason or None,
        "body": got.excerpt if got.status is not None else None,
        "error": got.error,
        "elapsedMs": round(got.elapsed * 1000),
        "payload": codec.loads(body),
    }


async def _email(n: Any, description: dict[str, Any], inbox: str, answer: dict[str, Any] | None, to: str | None) -> dict[str, Any]:
    """Mail the sample to ``to`` once (None: only compose it)."""
    target = n.mail_server()
    sender = Address(n.email_from.name, addr_spec=n.email_from.email)
    content = message.compose(description, inbox=inbox, links=answer)
    out: dict[str, Any] = {
        "ok": True,
        "sent": False,
        "server": target.shown,
        "from": str(sender),
        "to": to,
        "subject": content.subject,
        "text": content.text,
        "error": None,
        "elapsedMs": None,
    }
    if to is not None:
        got = await smtp.send(target, message.message(content, sender, to), n.timeout_seconds)
        out.update(ok=got.ok, sent=got.ok, error=got.error, elapsedMs=round(got.elapsed * 1000))
    return out
