"""The webhook channel: each notice as one POST to ``notify.webhook_url``.

The body is built when the notice comes (``prepare``, while the question's
text is at hand) and POSTed with ``httpx.AsyncClient`` by the delivery
worker, at most ``WORKERS`` at once; a connection error, a timeout, a 5xx
or a 429 is worth another try (a longer ``Retry-After`` honoured), any
other answer outside 2xx is final. A delivery that succeeded is recorded
(``delivered``: a ``Notified`` change) so no restart sends it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import httpx
import structlog

from askd.channels import links
from askd.channels.event import event, inbox_url
from askd.channels.webhook import request
from askd.channels.channel import ASKED, REMINDER, Channel, OnceKey, Delivery, Notice, Outcome
from askd.channels.retry import Retry

if TYPE_CHECKING:
    from askd.channels.metrics import WebhookMetrics

log = structlog.get_logger("askd.notify")

WORKERS = 4
CHAT_FORMATS = ("slack", "teams")  # one message for a shared channel, with that channel's links
MAX_HELD = 1000  # deliveries queued, in flight or waiting to retry


class WebhookChannel(Channel):
    name = "webhook"
    concurrency: ClassVar[int | None] = WORKERS

    def __init__(
        self,
        *,
        url: str,
        fmt: str,
        secret: str | None,
        timeout: float,
        link_base: str,
        metrics: WebhookMetrics,
        answer_links: links.Minter | None = None,
        delivered: Callable[[str, str], None],
        retry: Retry | None = None,
        max_held: int = MAX_HELD,
    ) -> None:
        super().__init__(retry or Retry(), max_held)
        self.url, self.fmt, self.timeout, self.link_base = url, fmt, timeout, link_base
        self._secret = secret
        self._answer_links = answer_links  # answer links are made (askd.channels.links)
        self.metrics = metrics
        self._delivered = delivered
        self._client = httpx.AsyncClient(follow_redirects=False)
        self.target = request.redact_url(url)  # the only form of the URL ever logged

    def prepare(self, notice: Notice) -> list[Delivery] | None:
        if notice.kind not in (ASKED, REMINDER):
            return None
        req, k = notice.req, notice.reminder if notice.kind == REMINDER else 0
        body = self._body(notice)
        # One id per question and step (or reminder): a resend after a restart is the same message.
        msg_id = f"msg_{req.request_id}_{f'r{k}' if k else req.escalations}"
        # A reminder's claim is kept by every store (a restart does not send it
        # again); a question's own is the cluster's (its record is ``Notified``).
        claim = OnceKey.of("remind" if k else "notify", req, req.escalations, reminder=k)
        return [Delivery(req.session_id, req.request_id, (body, msg_id), claim)]

    def _body(self, notice: Notice) -> bytes:
        req, users, k = notice.req, notice.users, notice.reminder
        url = inbox_url(self.link_base, req.session_id)
        if self._answer_links is None:
            return request.render(self.fmt, event(req.describe(), url, users, reminder=k))
        minter = self._answer_links
        if self.fmt in CHAT_FORMATS:
            channel = minter.channel_links(req, users)  # a shared channel's (Minter.channel_links)
            return request.render(self.fmt, event(req.describe(), url, users, reminder=k), channel)
        links = minter.links_for(req, notice.newcomers)
        return request.render(self.fmt, event(req.describe(), url, users, links, reminder=k))

    async def attempt(self, delivery: Delivery) -> Outcome:
        body, msg_id = delivery.payload
        got = await request.post(self._client, self.url, body, self._secret, self.timeout, msg_id)
        return Outcome(got.ok, got.retryable, got.retry_after, got, None if got.ok else got.describe())

    def report(self, event: str, delivery: Delivery | None, notice: Notice, got: Outcome | None = None, **fields: Any) -> None:
        req = notice.req
        ids: dict[str, Any] = {"sessionId": req.session_id, "requestId": req.request_id}
        if notice.reminder:
            ids["reminder"] = notice.reminder
        if delivery is None:  # about the notice: no delivery was made of it
            if event == "dropped":
                self.metrics.failed.labels("dropped").inc()
                log.warning("webhook.dropped", **ids, **fields)
            else:
                log.exception("webhook.error", **fields, **ids)
            return
        ids["url"] = self.target
        if event == "skipped":
            log.info("webhook.skipped", **fields, **ids)
            return
        if event == "error":
            log.exception("webhook.error", **fields, **ids)
            return
        assert got is not None
        attempt: request.Attempt = got.detail
        outcome = {"attempt": delivery.attempts, "status": attempt.status, "elapsedMs": round(attempt.elapsed * 1000), **ids}
        if event == "delivered":
            self.metrics.delivered.inc()
            log.info("webhook.delivered", **outcome)
            if notice.kind == ASKED:  # a reminder's delivery is its claim's to keep
                self._delivered(delivery.session_id, delivery.request_id)
        elif event == "failed":
            reason = "exhausted" if attempt.retryable else "rejected"
            self.metrics.failed.labels(reason).inc()
            log.warning("webhook.failed", reason=reason, answer=attempt.describe(), **outcome)
        else:  # retry
            self.metrics.retried.inc()
            log.info("webhook.retry", answer=attempt.describe(), **fields, **outcome)

    async def aclose(self) -> None:
        """Stop at once: what is not delivered is left undelivered (a store
        keeps its questions un-notified, so a restart sends them)."""
        await super().aclose()
        await self._client.aclose()
