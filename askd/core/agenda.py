"""The agenda: every question's deadlines, in one schedule, and the webhooks due.

It owns the one :class:`~askd.core.schedule.Schedule` (each entry named by
its kind, ``deadlines.DEADLINE_KINDS``), which kinds each question can have
(decided once per registry), and the questions reported due for a webhook
until the front end drains them. It is the narrow view the deadline kinds
read (``deadlines.DeadlineOwner``): the limits, the webhook policy, a
request by its ids, and ``notify_due``. The front end needs a single timer
at ``next_deadline()``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from askd.core import reminders
from askd.core.audiences import Audiences
from askd.core.away import AWAY_DEADLINE
from askd.core.changes import Change
from askd.core.deadlines import DEADLINE_KINDS, DeadlineFailure, DeadlineKind, escalate_when
from askd.core.records import Limits, NotifyPolicy, Outbox, Request
from askd.core.schedule import Schedule


class Agenda:
    def __init__(
        self,
        limits: Limits,
        notify_policy: NotifyPolicy | None,
        clock: Callable[[], float],
        get: Callable[[str, str], Request | None],
        audiences: Audiences,
        online: Callable[[str], bool],
        box: Outbox,
    ) -> None:
        self.limits = limits
        self.notify_policy = notify_policy  # None: no webhook, nothing is ever due; fixed (``_plans`` reads it once)
        self.get = get  # a request by its ids (the session book's)
        self._audiences = audiences
        self._online = online  # whether a user has a tab open
        self._clock = clock
        self._box = box  # the outbox being filled: its ``notify``
        self._kinds = {kind.name: kind for kind in (*DEADLINE_KINDS, AWAY_DEADLINE)}  # and aways' ends (spec R)
        # The kinds a request can have, by (ended, has escalation steps),
        # decided once: a one-user question without a webhook policy has
        # only its timeout, then its forget (each kind looked at costs a call).
        self._plans = {
            (ended, stepped): tuple(k for k in DEADLINE_KINDS if k.ended is ended and k.can(self, stepped))
            for ended in (False, True)
            for stepped in (False, True)
        }
        self.schedule: Schedule[Request] = Schedule({k.name: partial(self._counts, k) for k in self._kinds.values()})
        # Reminders (askd.core.reminders): how many came of each pending
        # question, this node's count (none yet: not there); those due, until drained.
        self._reminded: dict[Request, int] = {}
        self.reminders: list[tuple[Request, int, list[str], list[str]]] = []
        # Deadlines whose kind raised when they fired, by (kind, key), each
        # retried with a backoff (``due``); those that failed since the
        # front end last drained them, for its log.
        self._failing: dict[tuple[str, Request | str], DeadlineFailure] = {}
        self.failures: list[DeadlineFailure] = []

    def _counts(self, kind: DeadlineKind, req: Request, at: float) -> bool:
        """A schedule entry counts while its kind's deadline for the request
        is still alive and still at that time (an extension moved a timeout:
        the entry at the old time is stale), or is the retry of a deadline
        that failed, still due. One that cannot tell counts: it is fired,
        and whatever fails is retried, so no entry stops the schedule."""
        try:
            if not kind.alive(self, req):
                return False
            return kind.when(self, req) == at or (bool(self._failing) and self._retrying(kind, req, at))
        except Exception:  # a kind's bug: ``due`` keeps it apart
            return True

    def _retrying(self, kind: DeadlineKind, key: Request | str, at: float) -> bool:
        failure = self._failing.get((kind.name, key))
        return failure is not None and failure.retry_at == at and kind.when(self, key) == failure.due_at

    # ---- a question's deadlines ---------------------------------------

    def plan(self, req: Request) -> None:
        """Schedule the request's deadlines of every kind for where it is in
        its life (pending or ended), from its own fields."""
        if req.remind is not None and req.pending:  # learnt of now: past reminders are over
            n = max(self._reminded.get(req, 0), reminders.passed(req, self._clock()))
            if n:
                self._reminded[req] = n
        for kind in self._plans[not req.pending, bool(req.escalate)]:
            at = kind.when(self, req)
            if at is not None:
                self.schedule.add(at, kind.name, req, req.order)

    def unplan(self, req: Request) -> None:
        """A request ended: its entries of the pending kinds that are not due
        yet stay in the schedule, stale, until they reach the top. (One due
        already was taken by ``due``, or soon is, and not counted: whichever
        node's ``Ended`` applies on a shared store.)"""
        now = self._clock()
        for kind in self._plans[False, bool(req.escalate)]:
            at = kind.when(self, req)
            if at is not None and at > now:
                self.schedule.stale()
        self._reminded.pop(req, None)

    def moved(self, req: Request, previous: float) -> None:
        """A pending question's deadline moved from ``previous``: the entry
        at the old one stays, stale (its kind's ``when`` moved: the schedule
        lets it pass), a new one is added, in its place among those due with it."""
        if previous > self._clock():
            self.schedule.stale()
        self.schedule.add(req.expires_at, "timeout", req, req.order)
        at = self.remind_when(req)  # a later end may let the next reminder come (a second entry is stale once one fires)
        if at is not None and self.notify_policy is not None:
            self.schedule.add(at, "remind", req, req.order)

    def stepped(self, req: Request) -> None:
        """An escalation step was taken: the next one's entry, if any."""
        at = escalate_when(self, req)
        if at is not None:
            self.schedule.add(at, "escalate", req, req.order)

    def step_adds(self, req: Request, entries: tuple[str, ...]) -> tuple[str, ...]:
        """The users a step's ``entries`` add now (``DeadlineOwner.step_adds``)."""
        return tuple(sorted(self._audiences.resolve(entries) - self._audiences.of(req)))

    # ---- aways (spec R) --------------------------------------------------

    def away_until(self, user: str) -> float | None:
        """When the user's away ends (None: not away)."""
        away = self._audiences.aways.get(user)
        return None if away is None else away.until

    def away_planned(self, user: str, until: float) -> None:
        """An away starts (or moves): its end on the schedule, keyed by the
        user (an entry at an old ``until`` no longer counts)."""
        self.schedule.add(until, "away", user)  # type: ignore[arg-type]

    # ---- webhooks -----------------------------------------------------

    def notify_due(self, req: Request, *, again: bool = False) -> None:
        """Report a webhook due; ``again`` after an escalation step, even if
        one was delivered before (for the new audience)."""
        policy = self.notify_policy
        if policy is None or not req.pending or (req.notified and not again):
            return
        if policy.only_offline and any(self._online(u) for u in self._audiences.notify_users(req)[1]):
            return  # seen online at the due moment: no webhook (spec E)
        self._box.notify.append(req)

    def remind_when(self, req: Request) -> float | None:
        """When the question's next reminder is due (``reminders.when``)."""
        return reminders.when(req, self._reminded.get(req, 0))

    def remind_due(self, req: Request) -> None:
        """The question's next reminder came: reported for those of its
        audience (away users left out, as notify_users does) with no tab
        here (none: nothing to send); the next one is scheduled."""
        k = self._reminded[req] = self._reminded.get(req, 0) + 1
        users = self._audiences.notify_users(req)[0]
        offline = [u for u in users if not self._online(u)]
        if offline:
            self.reminders.append((req, k, users, offline))
        at = self.remind_when(req)
        if at is not None:
            self.schedule.add(at, "remind", req, req.order)

    # ---- time ---------------------------------------------------------

    def next_deadline(self) -> float | None:
        """When ``due()`` next has work to do, in the clock's seconds."""
        return self.schedule.next_at()

    def due(self) -> list[Change]:
        """What the clock has made due by now, changing nothing: each due
        deadline's kind decides (questions past ``expiresAt`` end as
        ``timeout``, results past their retention are forgotten, webhooks
        come due in the outbox). The entries leave the schedule: the front
        end commits and applies the changes (or, if its store failed, keeps
        them to try again)."""
        now = self._clock()
        out: list[Change] = []
        for name, key in self.schedule.pop_due(now):
            kind = self._kinds[name]
            try:
                change = kind.fire(self, key, now)
            except Exception as err:  # one deadline's failure is its own (``_failed``)
                self._failed(kind, key, now, err)
                continue
            if self._failing:
                self._failing.pop((name, key), None)
            if change is not None:
                out.append(change)
        if self._failing:
            self._let_go()
        return out

    def _failed(self, kind: DeadlineKind, key: Request | str, now: float, err: Exception) -> None:
        """A deadline's kind raised: it is tried again after a backoff (its
        entry comes back; ``_counts`` lets it through while the deadline
        still counts), the others due go on, and the front end hears of it
        (``failures``)."""
        was = self._failing.get((kind.name, key))
        if was is None:
            try:
                due_at = kind.when(self, key)
            except Exception:
                due_at = None
            due_at, since, attempts = now if due_at is None else due_at, now, 1
        else:
            due_at, since, attempts = was.due_at, was.since, was.attempts + 1
        failure = DeadlineFailure(kind.name, key, due_at, since, attempts, now + DeadlineFailure.backoff(attempts), err)
        self._failing[(kind.name, key)] = failure
        self.failures.append(failure)
        self.schedule.add(failure.retry_at, kind.name, key, key.order if isinstance(key, Request) else 0)  # type: ignore[arg-type]

    def failing(self) -> list[DeadlineFailure]:
        """The deadlines that failed and are still due to be retried, oldest
        failure first."""
        self._let_go()
        return sorted(self._failing.values(), key=lambda f: f.since)

    def _let_go(self) -> None:
        """Forget the failures whose deadline no longer counts: the question
        ended another way (an answer, a cancel), or its deadline moved."""
        for key, failure in list(self._failing.items()):
            kind = self._kinds[failure.kind]
            try:
                gone = not kind.alive(self, failure.key) or kind.when(self, failure.key) != failure.due_at
            except Exception:
                gone = False
            if gone:
                del self._failing[key]
