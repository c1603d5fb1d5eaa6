"""One webhook request (protocol section 12): its body in the URL's format
(``json``, ``slack``, ``teams``), its Standard Webhooks headers and
signature, and one attempt to POST it.

Shared by the daemon's webhook channel (``askd.channels.webhook.channel``,
which the delivery worker queues and retries) and ``askd notify test``
(one attempt, reported to the terminal).
A webhook URL often holds a secret in its path (Slack's do), so only
:func:`redact_url` of it is ever printed or logged.
"""

from __future__ import annotations

import asyncio
import base64
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import httpx
from standardwebhooks import Webhook

from askd import __version__
from askd.channels.retry import retry_after
from askd.channels.slack.message import slack_blocks
from askd.channels.teams.card import teams_message
from askd.core.events import encode

ID_HEADER, TIMESTAMP_HEADER, STANDARD_SIGNATURE_HEADER = "webhook-id", "webhook-timestamp", "webhook-signature"
EXCERPT_CHARS = 200


def redact_url(url: str) -> str:
    """``https://hooks.slack.com/…``: scheme and host only, never the path
    or query, where webhook URLs keep their secret."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/…"


def render(fmt: str, ev: dict[str, Any], channel: dict[str, Any] | None = None) -> bytes:
    """The raw body to POST (and to sign) in ``fmt``: ``json``, or ``slack``
    or ``teams`` with the channel's answer links (``channel``, see
    :func:`slack_blocks` and :func:`askd.channels.teams.card.teams_message`)."""
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
        retry_after=retry_after(response.headers.get("Retry-After")),
        elapsed=time.monotonic() - started,
    )
