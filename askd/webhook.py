"""Webhook deliveries (spec E): the body, its signature, and one attempt.

Shared by the daemon's sender (``askd.server.notify``, which queues and
retries) and ``askd notify test`` (one attempt, reported to the terminal).
A webhook URL often holds a secret in its path (Slack's do), so only
:func:`redact_url` of it is ever printed or logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from askd import __version__
from askd.core.events import encode
from askd.mrkdwn import escape, to_mrkdwn

EVENT = "question.asked"
SIGNATURE_HEADER = "X-Askd-Signature"
EXCERPT_CHARS = 200


def inbox_url(base: str, session_id: str) -> str:
    """The inbox page at one session; no token (the reader signs in)."""
    return f"{base.rstrip('/')}/?{urlencode({'session': session_id})}"


def redact_url(url: str) -> str:
    """``https://hooks.slack.com/…``: scheme and host only, never the path
    or query, where webhook URLs keep their secret."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/…"


def event(description: dict[str, Any], url: str, users: list[str] | None = None) -> dict[str, Any]:
    """The ``json`` body from a pending question as listings describe it
    (``Request.describe()``); metadata is the agent's and stays out.
    ``users`` is the audience resolved (sorted); ``userId`` is there only
    for a question asked of one user, ``escalation`` after a step (spec H)."""
    out: dict[str, Any] = {"event": EVENT}
    if "userId" in description:
        out["userId"] = description["userId"]
    to = description.get("to", [description.get("userId")])
    out.update(to=to, users=users if users is not None else [u for u in to if not u.startswith("group:")])
    if description.get("escalations"):
        out["escalation"] = description["escalations"]
    return {
        **out,
        "sessionId": description["sessionId"],
        "requestId": description["requestId"],
        "questions": description["questions"],
        "createdAt": description["createdAt"],
        "expiresAt": description["expiresAt"],
        "url": url,
    }


def slack_text(ev: dict[str, Any]) -> str:
    """One short message for a chat incoming webhook (Slack's mrkdwn)."""
    until = str(ev["expiresAt"])[11:16]
    who = ev.get("userId") or ", ".join(ev.get("to") or ev.get("users") or ())
    lines = [f"An agent is waiting for *{escape(who)}* to answer (session {escape(ev['sessionId'])}, until {until} UTC):"]
    for q in ev["questions"]:
        header = q.get("header")
        line = f"*{escape(header)}*: " if isinstance(header, str) and header else ""
        line += to_mrkdwn(str(q.get("question", "")))  # Markdown, as far as mrkdwn goes
        labels = [str(o.get("label", "")) for o in q.get("options") or [] if isinstance(o, dict)]
        if labels:
            line += " (" + " / ".join(escape(label) for label in labels) + ")"
        lines.append("• " + line)
    lines.append(f"<{ev['url']}|Open the askd inbox to answer>")
    return "\n".join(lines)


def render(fmt: str, ev: dict[str, Any]) -> bytes:
    """The raw body to POST (and to sign) in ``fmt``: ``json`` or ``slack``."""
    if fmt == "slack":
        return encode({"text": slack_text(ev)})
    return encode(ev)


def sign(secret: str, body: bytes) -> str:
    """The ``X-Askd-Signature`` value: ``sha256=`` and the hex HMAC of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers(body: bytes, secret: str | None) -> dict[str, str]:
    out = {"Content-Type": "application/json", "User-Agent": f"askd/{__version__}"}
    if secret:
        out[SIGNATURE_HEADER] = sign(secret, body)
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


async def post(client: httpx.AsyncClient, url: str, body: bytes, secret: str | None, timeout: float) -> Attempt:
    """POST ``body`` once; never raises for a network failure. ``timeout``
    bounds the whole attempt, however slowly a receiver trickles bytes."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("POST", url, content=body, headers=headers(body, secret), timeout=timeout) as response:
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
