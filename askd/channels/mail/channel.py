"""The e-mail channel (protocol section 12): one mail per recipient per question and
escalation step, and per reminder (its Subject starts "Reminder:").

The recipients are the people a notice is about (everyone asked, or after
an escalation step the step's new members) that have an address. Each
mail is a delivery of its own: claimed once (``mail:<rid>:<step>:<user>``,
atomic and durable) before its first attempt, so no restart and no other
node sends it again: a crash between the claim and the send loses that
mail rather than sending it twice. An attempt that may succeed later (no
answer, a timeout, a 4xx reply) is tried again while the question is
pending; a 5xx reply is final. Nothing here can delay, fail or change an ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from email.headerregistry import Address
from typing import TYPE_CHECKING, Any

import structlog

from askd.channels.event import inbox_url
from askd.channels.mail import message, smtp
from askd.channels.channel import ASKED, REMINDER, Channel, OnceKey, Delivery, Notice, Outcome
from askd.channels.retry import Retry
from askd.store import StoreUnavailable

if TYPE_CHECKING:
    from askd.core import Request
    from askd.channels.metrics import EmailMetrics

log = structlog.get_logger("askd.mail")

MAX_HELD = 1000  # questions being mailed at once; more are dropped (counted, logged)

#: The answer links of a question for each of some recipients
#: (``{user: {"open": URL, "options": [{"label", "url"}, ...]}}``).
Links = Callable[["Request", list[str]], dict[str, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class _Question:
    """A notice as the mails need it, taken when it comes."""

    step: int
    reminder: int  # 0: not a reminder
    to: list[str]
    description: dict[str, Any]
    links: dict[str, Any]


@dataclass(slots=True)
class _Mail:
    user: str
    address: str
    content: message.Mail


class MailChannel(Channel):
    name = "email"

    def __init__(
        self,
        *,
        target: smtp.SmtpTarget,
        sender: Address,
        timeout: float,
        link_base: str,
        addresses: Callable[[Sequence[str]], Awaitable[dict[str, str]]],
        metrics: EmailMetrics,
        links: Links | None = None,
        retry: Retry | None = None,
        max_held: int = MAX_HELD,
    ) -> None:
        super().__init__(retry or Retry(attempts=5), max_held)
        self.target, self.sender, self.timeout, self.link_base = target, sender, timeout, link_base
        self.metrics = metrics
        self.links = links
        self._addresses = addresses  # the store's user directory

    def prepare(self, notice: Notice) -> _Question | None:
        req, to = notice.req, notice.newcomers  # ``users``, the whole audience, is the webhook's
        if notice.kind not in (ASKED, REMINDER) or not to:
            return None
        links = self.links(req, to) if self.links is not None else {}
        return _Question(req.escalations, notice.reminder if notice.kind == REMINDER else 0, to, req.describe(), links)

    async def deliveries(self, prepared: _Question, notice: Notice) -> list[Delivery]:
        req, q = notice.req, prepared
        try:
            addresses = await self._addresses(q.to)
        except StoreUnavailable as err:
            log.warning("email.skipped", reason="store unavailable", error=str(err), **self._ids(notice, q.step))
            return []
        inbox = inbox_url(self.link_base, req.session_id)
        return [
            Delivery(
                req.session_id,
                req.request_id,
                _Mail(user, addresses[user], self._compose(q, inbox, user)),
                OnceKey.of("mail", req, q.step, user, reminder=q.reminder),
                recipient=user,
            )
            for user in sorted(addresses)
        ]

    @staticmethod
    def _compose(q: _Question, inbox: str, user: str) -> message.Mail:
        content = message.compose(q.description, inbox=inbox, links=q.links.get(user))
        return message.reminder(content) if q.reminder else content

    async def attempt(self, delivery: Delivery) -> Outcome:
        m: _Mail = delivery.payload
        try:
            msg = message.message(m.content, self.sender, m.address)
        except message.NotBuilt as err:  # final: another try builds the same mail
            return Outcome(False, False, None, smtp.Sent(str(err)), str(err))
        got = await smtp.send(self.target, msg, self.timeout)
        return Outcome(got.ok, got.temporary, None, got, got.error)

    @staticmethod
    def _ids(notice: Notice, step: int) -> dict[str, Any]:
        ids = {"sessionId": notice.req.session_id, "requestId": notice.req.request_id, "step": step}
        return {**ids, "reminder": notice.reminder} if notice.reminder else ids

    def report(self, event: str, delivery: Delivery | None, notice: Notice, got: Outcome | None = None, **fields: Any) -> None:
        step = delivery.claim.step if delivery is not None and delivery.claim is not None else notice.req.escalations
        ids = self._ids(notice, step)
        if delivery is None:  # about the notice: no mail was made of it
            if event == "dropped":
                self.metrics.emails.labels("dropped").inc(len(notice.newcomers))
                log.warning("email.dropped", sessionId=ids["sessionId"], requestId=ids["requestId"], **fields)
            else:
                log.exception("email.error", **fields, **ids)
            return
        user = delivery.payload.user
        if event == "skipped":
            log.info("email.skipped", userId=user, **fields, **ids)
            return
        if event == "error":  # one mail's bug never reaches another's, nor the ask
            self.metrics.emails.labels("failed").inc()
            log.exception("email.error", userId=user, **fields, **ids)
            return
        assert got is not None
        sent: smtp.Sent = got.detail
        outcome = {"userId": user, "attempt": delivery.attempts, "server": self.target.shown, "elapsedMs": round(sent.elapsed * 1000), **ids}
        if event == "delivered":
            self.metrics.emails.labels("sent").inc()
            log.info("email.sent", **outcome)
        elif event == "failed":
            self.metrics.emails.labels("failed").inc()
            log.warning("email.failed", reason=sent.error, **outcome)
        else:  # retry
            log.info("email.retry", reason=sent.error, **fields, **outcome)
