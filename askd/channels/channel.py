"""What a channel is: how the delivery worker talks to webhooks, e-mail and
whatever comes next (reminders, Slack message updates, Teams cards).

The pipeline hands every channel each ``Notice``. A channel turns it into
``Delivery``s (``prepare`` at once, while the question is at hand; then
``deliveries``, which may ask the store, e.g. for addresses), makes one
attempt at a time (``attempt``), and says what happened in its own words
(``report``: its log lines and metrics). Everything else is the worker's:
the claim (``Delivery.claim``, once, before the first attempt), the
still-pending check before each attempt, the retries with the channel's
``retry``, the bound (``_max_held`` notices at once) and the stop.

A new kind of notice (a reminder, a question that ended) is a new
``Notice.kind``; a channel that has nothing to say about it returns None
from ``prepare``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from askd.channels.retry import Retry

if TYPE_CHECKING:
    from askd.core import Request

ASKED = "asked"  # a question due for a notification (or an escalation step's)
REMINDER = "reminder"  # reminder ``Notice.reminder`` (from 1) of a pending question
ENDED = "ended"  # a question that has ended (its messages are updated: Slack's chat.update)

# How long past a question's last possible end its claims are kept.
CLAIM_SLACK_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Notice:
    """A question due for a notification: ``users`` its audience, resolved;
    ``newcomers`` those the notice is about (everyone asked, after an
    escalation step the step's new members, in a reminder those with no tab)."""

    req: Request
    users: list[str]
    newcomers: list[str]
    kind: str = ASKED
    reminder: int = 0  # with ``REMINDER``: which one, from 1


@dataclass(frozen=True, slots=True)
class OnceKey:
    """The once key a delivery takes in the store before its first attempt,
    so one node sends it, once (askd.channels.once). ``key`` is
    ``notify:<rid>:<step>`` (a webhook) or ``mail:<rid>:<step>:<user>``,
    with ``r<k>`` for ``<step>`` for reminder k (its webhook's is
    ``remind:<rid>:r<k>``); ``until`` is when the key may be forgotten
    (epoch seconds)."""

    key: str
    until: float
    req: Request
    step: int
    user: str | None = None

    @classmethod
    def of(cls, kind: str, req: Request, step: int, user: str | None = None, *, reminder: int = 0) -> OnceKey:
        key = f"{kind}:{req.request_id}:{f'r{reminder}' if reminder else step}" + (f":{user}" if user is not None else "")
        return cls(key, req.expires_at + req.max_extension + CLAIM_SLACK_SECONDS, req, step, user)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt got. ``retryable``: another try may succeed;
    ``retry_after``: the receiver's own wait, in seconds."""

    ok: bool
    retryable: bool = False
    retry_after: float | None = None
    detail: Any = None  # the channel's own record of the attempt, for its report
    # Why it failed, in a line with no secret and no question text: what
    # the delivery status shows (askd.channels.status).
    reason: str | None = None


@dataclass(eq=False)
class Delivery:
    """One message to one place: made by a channel, run by the worker."""

    session_id: str
    request_id: str
    payload: Any  # the channel's: a body to POST, a mail to send
    claim: OnceKey | None = None  # None: nothing to claim
    attempts: int = 0
    # Attempted only while its question is pending (an edit after the end is not).
    only_pending: bool = True
    # Whom it is for, as the delivery status names it: a user id, a chat
    # channel (``#C123``); None for the channel's one message (a webhook).
    recipient: str | None = None


class Runner(Protocol):
    """What runs a channel's deliveries (askd.channels.worker.Worker)."""

    def submit(self, channel: Channel, notice: Notice) -> bool: ...

    def held(self, channel: Channel) -> int: ...

    async def stop(self, channel: Channel) -> None: ...


class Channel(ABC):
    """A place notices go; ``name`` says which (``webhook``, ``email``)."""

    name: ClassVar[str]
    #: Attempts of this channel at once (None: as many as are held).
    concurrency: ClassVar[int | None] = None

    def __init__(self, retry: Retry, max_held: int) -> None:
        self.retry = retry
        self._max_held = max_held  # notices held at once; beyond, dropped and counted
        self._worker: Runner | None = None  # set by the worker it is added to

    @abstractmethod
    def prepare(self, notice: Notice) -> Any:
        """What this channel makes of ``notice``, built at once (never
        blocks); None: nothing to send. May raise: reported as ``error``."""

    async def deliveries(self, prepared: Any, notice: Notice) -> list[Delivery]:
        """The deliveries of what ``prepare`` made; by default it made them."""
        return list(prepared)

    @abstractmethod
    async def attempt(self, delivery: Delivery) -> Outcome:
        """One try; never raises for a failure of the receiver."""

    @abstractmethod
    def report(self, event: str, delivery: Delivery | None, notice: Notice, got: Outcome | None = None, **fields: Any) -> None:
        """Log and count ``event``: ``delivered``, ``retry`` (``retryIn``),
        ``failed``, ``skipped`` (``reason``), ``dropped`` (``held``) or
        ``error`` (from inside an exception handler; ``reason``: the
        exception's type). Every line names the request id."""

    # ---- through the worker ---------------------------------------------

    def submit(self, notice: Notice) -> bool:
        """Hand ``notice`` to this channel alone; False when dropped."""
        assert self._worker is not None, "a channel is added to a worker before use"
        return self._worker.submit(self, notice)

    def held(self) -> int:
        """Notices of this channel not finished (queued, in flight or
        waiting to retry)."""
        return self._worker.held(self) if self._worker is not None else 0

    async def aclose(self) -> None:
        """Stop at once: what is not delivered is left undelivered."""
        if self._worker is not None:
            await self._worker.stop(self)
