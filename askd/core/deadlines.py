"""The kinds of deadline a request can have, as one table.

Every deadline is one entry ``(at, kind, request)`` in the registry's one
:class:`~askd.core.schedule.Schedule`, which knows no kind. Each kind here
says when it is due from the request's own (stored) fields, whether an entry
still counts, and what firing decides, so a store's restore schedules every
kind with no code of its own and a new kind is one more row. A kind reads
what schedules it (the registry's ``agenda.Agenda``) through
:class:`DeadlineOwner`, a narrow view: this table imports no engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from askd.core.changes import Change, Ended, Escalated, Forgot
from askd.core.lifecycle import TIMEOUT_ERROR, Trigger
from askd.core.receipted import ended_digest
from askd.core.records import Limits, NotifyPolicy, Request


class DeadlineOwner(Protocol):
    """What a deadline kind reads of what schedules it (``agenda.Agenda``)."""

    limits: Limits
    notify_policy: NotifyPolicy | None  # None: no webhook, nothing is ever due

    def get(self, session_id: str, request_id: str) -> Request | None: ...

    def notify_due(self, req: Request) -> None:
        """Report the pending question due for a webhook (not a change)."""

    def remind_when(self, req: Request) -> float | None:
        """When the question's next reminder is due (askd.core.reminders)."""

    def remind_due(self, req: Request) -> None:
        """Report the pending question's next reminder (not a change)."""

    def step_adds(self, req: Request, entries: tuple[str, ...]) -> tuple[str, ...]:
        """The users an escalation step's ``entries`` add to the question's
        audience now (groups resolved; none already in it), sorted."""


@dataclass(frozen=True, slots=True)
class DeadlineKind:
    """One kind of deadline a request can have. ``when`` reads the due time
    from the request's own (stored) fields, so a store's restore schedules
    it again with no code of its own; ``fire`` says what the clock decides
    when it comes (a change to commit, or None: a report only)."""

    name: str
    ended: bool  # scheduled once the request ended (else while pending)
    when: Callable[[DeadlineOwner, Request], float | None]
    alive: Callable[[DeadlineOwner, Request], bool]
    fire: Callable[[DeadlineOwner, Request, float], Change | None]
    # Whether the kind can come up at all in this registry for a request
    # with (True) or without escalation steps: the registry looks only at
    # those (``Agenda.plan``); ``when`` says None for the rest anyway.
    can: Callable[[DeadlineOwner, bool], bool] = lambda reg, stepped: True


# A deadline whose handling raised is tried again after this long, doubled
# at each failure up to the cap: never a hot loop, never more than a minute
# late once whatever failed is mended.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class DeadlineFailure:
    """A due deadline whose kind raised when it fired (``Agenda.due``): kept,
    and retried at ``retry_at``, until it fires cleanly or no longer counts
    (the question ended another way, its deadline moved)."""

    kind: str
    key: Request | str  # the request (a user's id for an away's end)
    due_at: float  # the deadline it was (its kind's ``when`` then)
    since: float  # the first failure
    attempts: int
    retry_at: float
    error: BaseException  # the last one, for the front end's log

    @staticmethod
    def backoff(attempts: int) -> float:
        """The wait before the next try, after ``attempts`` failures."""
        return min(RETRY_FIRST_SECONDS * 2.0 ** min(attempts - 1, 16), RETRY_MAX_SECONDS)


def _notify_when(reg: DeadlineOwner, req: Request) -> float | None:
    policy = reg.notify_policy
    # ``after`` 0 is reported at the ask itself (``effects.Apply.register``), not a tick later.
    if policy is None or req.notified or policy.after <= 0:
        return None
    return req.created_at + policy.after


def _notify_fire(reg: DeadlineOwner, req: Request, now: float) -> None:
    reg.notify_due(req)  # not a change: a report for the front end


def _timeout_fire(reg: DeadlineOwner, req: Request, now: float) -> Ended:
    default = req.on_timeout
    return Ended(
        req.session_id, req.request_id, Trigger.EXPIRE, default, TIMEOUT_ERROR, now, defaulted=default is not None,
        digest=ended_digest(req, default),
    )


def escalate_when(reg: DeadlineOwner, req: Request) -> float | None:
    """When the request's next escalation step is due (None: no step left)."""
    if req.escalations >= len(req.escalate):
        return None
    return req.created_at + req.escalate[req.escalations][0]


def _escalate_fire(reg: DeadlineOwner, req: Request, now: float) -> Escalated | None:
    at = escalate_when(reg, req)
    if at is None or at > now:
        return None  # an entry for a step taken already (another node's): the next has its own
    added = reg.step_adds(req, req.escalate[req.escalations][1]) if req.escalations < len(req.escalate) else ()
    return Escalated(req.session_id, req.request_id, req.escalations + 1, added)


DEADLINE_KINDS: tuple[DeadlineKind, ...] = (
    # A pending question's expiresAt: it ends as ``timeout`` (with its
    # onTimeout default as answers, when it has one).
    DeadlineKind("timeout", False, lambda reg, req: req.expires_at, lambda reg, req: req.pending, _timeout_fire),
    # A webhook notification's due time, ``createdAt + notify.after``.
    DeadlineKind(
        "notify",
        False,
        _notify_when,
        lambda reg, req: req.pending and not req.notified,
        _notify_fire,
        lambda reg, stepped: reg.notify_policy is not None and reg.notify_policy.after > 0,
    ),
    # The next escalation step's time, ``createdAt + afterSeconds`` (spec H).
    DeadlineKind(
        "escalate",
        False,
        escalate_when,
        lambda reg, req: req.pending and req.escalations < len(req.escalate),
        _escalate_fire,
        lambda reg, stepped: stepped,
    ),
    # The next reminder, ``createdAt + k * everySeconds`` (askd.core.reminders):
    # a report, as ``notify``; only where notifications go at all.
    DeadlineKind(
        "remind",
        False,
        lambda reg, req: reg.remind_when(req),
        lambda reg, req: req.pending and req.remind is not None,
        lambda reg, req, now: reg.remind_due(req),
        lambda reg, stepped: reg.notify_policy is not None,
    ),
    # An ended question's result retention runs out: it is forgotten.
    DeadlineKind(
        "forget",
        True,
        lambda reg, req: None if req.ended_at is None else req.ended_at + reg.limits.result_ttl,
        # Not if already forgotten (a shared store's other node did).
        lambda reg, req: not req.pending and reg.get(req.session_id, req.request_id) is req,
        lambda reg, req, now: Forgot(req.session_id, req.request_id),
    ),
)
