"""The webhook sender: a bounded queue, a few workers, retries with backoff.

The hub hands over each question the core reports as due (``submit``, which
never blocks and never raises); its body is built at once, while the
question's text is at hand. Workers POST it with ``httpx.AsyncClient`` on
the event loop. A failed attempt (no answer, timeout, 5xx, 429) is tried
again after a backoff with jitter, until it succeeds, the question ends, or
``Retry.attempts`` have failed; any other 4xx is final. A waiting retry is
a loop timer, not a task. Nothing here can delay, fail or change an ask.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from askd import links, webhook
from askd.core import Request
from askd.server.logs import get_logger
from askd.server.metrics import WebhookMetrics

log = get_logger("askd.notify")

WORKERS = 4
MAX_HELD = 1000  # deliveries queued, in flight or waiting to retry


@dataclass(frozen=True, slots=True)
class Retry:
    """Backoff between attempts: the n-th wait is drawn from
    ``[d/2, d]`` with ``d = min(cap, base * 2**(n-1))`` (half jitter: spread,
    but never an immediate hammering). Tests shorten ``base``."""

    attempts: int = 10
    base: float = 1.0
    cap: float = 120.0

    def delay(self, failed: int) -> float:
        d = min(self.cap, self.base * 2 ** (failed - 1))
        return d / 2 + random.uniform(0, d / 2)


@dataclass(eq=False)
class Delivery:
    session_id: str
    request_id: str
    body: bytes
    msg_id: str  # webhook-id: the same on every retry
    attempts: int = 0
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class Notifier:
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
        still_pending: Callable[[str, str], bool],
        delivered: Callable[[str, str], None],
        retry: Retry | None = None,
        workers: int = WORKERS,
        max_held: int = MAX_HELD,
    ) -> None:
        self.url, self.fmt, self.timeout, self.link_base = url, fmt, timeout, link_base
        self._secret = secret
        self._answer_links = answer_links  # answer links are made (askd.links)
        self.metrics = metrics
        self.retry = retry or Retry()
        self._still_pending = still_pending
        self._delivered = delivered
        self._max_held = max_held
        self._held: set[Delivery] = set()
        self._queue: asyncio.Queue[Delivery] = asyncio.Queue()  # bounded by max_held through _held
        self._client = httpx.AsyncClient(follow_redirects=False)
        self._workers = [asyncio.get_running_loop().create_task(self._work()) for _ in range(workers)]
        self.target = webhook.redact_url(url)  # the only form of the URL ever logged

    # ---- from the hub ---------------------------------------------------

    def submit(self, req: Request, users: list[str], newcomers: list[str]) -> bool:
        """Queue a delivery for a pending question (``users``: its audience,
        resolved; ``newcomers``: those the body is about, after an escalation
        step the step's new members); False when it was dropped."""
        try:
            body = self._body(req, users, newcomers)
        except Exception:  # a bug here must not reach the ask
            log.exception("webhook.error", sessionId=req.session_id, requestId=req.request_id)
            return False
        if len(self._held) >= self._max_held:
            self.metrics.failed.labels("dropped").inc()
            log.warning("webhook.dropped", sessionId=req.session_id, requestId=req.request_id, held=len(self._held))
            return False
        # One id per question and step: a resend after a restart is the same message.
        job = Delivery(req.session_id, req.request_id, body, f"msg_{req.request_id}_{req.escalations}")
        self._held.add(job)
        self._queue.put_nowait(job)
        return True

    def _body(self, req: Request, users: list[str], newcomers: list[str]) -> bytes:
        url = webhook.inbox_url(self.link_base, req.session_id)
        if self._answer_links is None:
            return webhook.render(self.fmt, webhook.event(req.describe(), url, users))
        minter = self._answer_links
        if self.fmt == "slack":
            # A channel is shared: its links name the recipient only when there is one.
            recipient = users[0] if len(users) == 1 else None
            channel = minter.link_set(req, recipient)
            return webhook.render(self.fmt, webhook.event(req.describe(), url, users), channel)
        return webhook.render(self.fmt, webhook.event(req.describe(), url, users, minter.links_for(req, newcomers)))

    # ---- the workers ----------------------------------------------------

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await self._attempt(job)
            except asyncio.CancelledError:
                raise
            except Exception:  # a worker never dies of one delivery
                log.exception("webhook.error", sessionId=job.session_id, requestId=job.request_id)
                self._held.discard(job)

    async def _attempt(self, job: Delivery) -> None:
        ids = {"sessionId": job.session_id, "requestId": job.request_id, "url": self.target}
        if not self._still_pending(job.session_id, job.request_id):
            self._held.discard(job)
            log.info("webhook.skipped", reason="question ended", attempts=job.attempts, **ids)
            return
        job.attempts += 1
        got = await webhook.post(self._client, self.url, job.body, self._secret, self.timeout, job.msg_id)
        outcome = {"attempt": job.attempts, "status": got.status, "elapsedMs": round(got.elapsed * 1000), **ids}
        if got.ok:
            self._held.discard(job)
            self.metrics.delivered.inc()
            log.info("webhook.delivered", **outcome)
            self._delivered(job.session_id, job.request_id)
            return
        if not got.retryable or job.attempts >= self.retry.attempts:
            self._held.discard(job)
            reason = "exhausted" if got.retryable else "rejected"
            self.metrics.failed.labels(reason).inc()
            log.warning("webhook.failed", reason=reason, answer=got.describe(), **outcome)
            return
        delay = self.retry.delay(job.attempts)
        if got.retry_after is not None:
            delay = max(delay, min(got.retry_after, self.retry.cap))
        self.metrics.retried.inc()
        log.info("webhook.retry", answer=got.describe(), retryIn=round(delay, 3), **outcome)
        job.timer = asyncio.get_running_loop().call_later(delay, self._requeue, job)

    def _requeue(self, job: Delivery) -> None:
        job.timer = None
        self._queue.put_nowait(job)

    # ---- stop -------------------------------------------------------------

    def held(self) -> int:
        """Deliveries not finished yet (queued, in flight or waiting to retry)."""
        return len(self._held)

    async def aclose(self) -> None:
        """Stop at once: what is not delivered is left undelivered (a store
        keeps its questions un-notified, so a restart sends them)."""
        for job in self._held:
            if job.timer is not None:
                job.timer.cancel()
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        await self._client.aclose()
