"""The e-mail sender (spec J): one mail per recipient per question and
escalation step, claimed in the store before it is sent.

The hub hands over each question due for notifications, as it does to the
webhook sender (``submit``, which never blocks and never raises), once the
node has won the question's claim and ``only_offline`` allows it. The
recipients are the audience members the notification is about (all of
them, or after an escalation step the step's new members) that have an
address. Each mail is claimed first (``Store.claim_mails``: atomic, durable),
so no restart and no other node sends it again: a crash between the claim
and the send loses that mail rather than sending it twice. A failed attempt
that may succeed later (no answer, a timeout, a 4xx reply) is tried again
with the webhook's backoff while the question is pending. Nothing here can
delay, fail or change an ask.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from email.headerregistry import Address
from typing import Any

from askd import mail, webhook
from askd.core import Request
from askd.server.logs import get_logger
from askd.server.metrics import EmailMetrics
from askd.server.notify import Retry
from askd.store import Store, StoreUnavailable

log = get_logger("askd.mail")

MAX_HELD = 1000  # questions being mailed at once; more are dropped (counted, logged)

#: The answer links of a question for each of some recipients
#: (``{user: {"open": URL, "options": [{"label", "url"}, ...]}}``).
Links = Callable[[Request, list[str]], dict[str, dict[str, Any]]]


class Mailer:
    def __init__(
        self,
        *,
        target: mail.SmtpTarget,
        sender: Address,
        timeout: float,
        link_base: str,
        store: Store,
        metrics: EmailMetrics,
        still_pending: Callable[[str, str], bool],
        links: Links | None = None,
        retry: Retry | None = None,
        max_held: int = MAX_HELD,
    ) -> None:
        self.target, self.sender, self.timeout, self.link_base = target, sender, timeout, link_base
        self.metrics = metrics
        self.retry = retry or Retry(attempts=5)
        self.links = links
        self._store = store
        self._still_pending = still_pending
        self._max_held = max_held
        self._held: set[asyncio.Task[None]] = set()

    # ---- from the hub ---------------------------------------------------

    def submit(self, req: Request, users: list[str], newcomers: list[str]) -> bool:
        """Mail those the notification is about (``newcomers``: the audience,
        or after an escalation step its new members; ``users``, the whole
        audience, is the webhook's). False when it was dropped."""
        try:
            to = newcomers
            if not to:
                return True
            description = req.describe()
            links = self.links(req, to) if self.links is not None else {}
        except Exception:  # a bug here must not reach the ask
            log.exception("email.error", sessionId=req.session_id, requestId=req.request_id)
            return False
        if len(self._held) >= self._max_held:
            self.metrics.emails.labels("dropped").inc(len(to))
            log.warning("email.dropped", sessionId=req.session_id, requestId=req.request_id, held=len(self._held))
            return False
        task = asyncio.get_running_loop().create_task(self._mail(req, req.escalations, to, description, links))
        self._held.add(task)
        task.add_done_callback(self._held.discard)
        return True

    # ---- the mails --------------------------------------------------------

    async def _mail(
        self, req: Request, step: int, to: list[str], description: dict[str, Any], links: dict[str, Any]
    ) -> None:
        ids = {"sessionId": req.session_id, "requestId": req.request_id, "step": step}
        try:
            addresses = await self._store.user_emails(to)
            won = await self._store.claim_mails(req, step, sorted(addresses)) if addresses else []
        except StoreUnavailable as err:
            log.warning("email.skipped", reason="store unavailable", error=str(err), **ids)
            return
        except Exception:
            log.exception("email.error", **ids)
            return
        inbox = webhook.inbox_url(self.link_base, req.session_id)
        await asyncio.gather(
            *(self._send(user, addresses[user], mail.compose(description, inbox=inbox, links=links.get(user)), ids) for user in won)
        )

    async def _send(self, user: str, address: str, content: mail.Mail, ids: dict[str, Any]) -> None:
        attempts = 0
        try:
            while True:
                if not self._still_pending(ids["sessionId"], ids["requestId"]):
                    log.info("email.skipped", reason="question ended", userId=user, attempts=attempts, **ids)
                    return
                attempts += 1
                got = await mail.send(self.target, mail.message(content, self.sender, address), self.timeout)
                outcome = {"userId": user, "attempt": attempts, "server": self.target.shown, "elapsedMs": round(got.elapsed * 1000), **ids}
                if got.ok:
                    self.metrics.emails.labels("sent").inc()
                    log.info("email.sent", **outcome)
                    return
                if not got.temporary or attempts >= self.retry.attempts:
                    self.metrics.emails.labels("failed").inc()
                    log.warning("email.failed", reason=got.error, **outcome)
                    return
                delay = self.retry.delay(attempts)
                log.info("email.retry", reason=got.error, retryIn=round(delay, 3), **outcome)
                await asyncio.sleep(delay)
        except asyncio.CancelledError:
            raise
        except Exception:  # one mail's bug never reaches another's, nor the ask
            self.metrics.emails.labels("failed").inc()
            log.exception("email.error", userId=user, **ids)

    # ---- stop -------------------------------------------------------------

    def held(self) -> int:
        """Questions whose mails are not finished yet."""
        return len(self._held)

    async def aclose(self) -> None:
        """Stop at once: a mail claimed and not sent is not sent (at most once)."""
        for task in list(self._held):
            task.cancel()
        await asyncio.gather(*self._held, return_exceptions=True)
