"""Deadlines: every question's deadlines in one schedule, their kinds as
one table, and the part of the registry that keeps them.

A deadline is ``(at, kind, key)``: a time, a kind's name (``timeout``,
``notify``, ``escalate``, ``remind``, ``forget``, ``away``) and what it is
for (a request; a user's id for an away's end).

``Schedule`` is the heap, and knows no kind: it keeps entries in time
order, ties by an ``order`` its owner gives (the order the question was
asked in, kept by the request), then in the order they were added, so an
entry added again (an extended timeout) keeps its place among those due at
the same moment; it asks the kind's ``alive`` predicate whether an entry
(its key, at its time) still counts. Entries whose key moved on are left
in the heap and skipped when they reach the top (no search to remove one);
the heap is rebuilt when its owner reports most of them stale (a third), as
asyncio does with cancelled timers. So a front end needs one timer, at
``next_at()``, whatever the number and kinds of deadlines.

``DEADLINE_KINDS`` (and ``AWAY_DEADLINE``) are the kinds: each says when it
is due from the request's own (stored) fields, whether an entry still
counts, and what firing decides, so a store's restore schedules every kind
with no code of its own and a new kind is one more row. A kind reads what
schedules it through :class:`DeadlineOwner`, a narrow view.

``Deadlines`` is the registry's part that owns the one schedule, which
kinds each question can have (decided once per registry), and the
questions reported due for a webhook or a reminder until the front end
drains them. It is what the kinds read as their ``DeadlineOwner``: the
limits, the webhook policy, a request by its ids, and ``notify_due``. The
front end needs a single timer at ``next_deadline()``.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from askd.core import reminders
from askd.core.registry.audiences import Audiences
from askd.core.changes import AwayEnded, Change, Ended, Escalated, Forgot
from askd.core.digests import ended_digest
from askd.core.lifecycle import TIMEOUT_ERROR, Trigger
from askd.core.records import Limits, NotifyPolicy, Outbox, Request

# ---- the schedule ---------------------------------------------------------

K = TypeVar("K")

# Rebuild the heap once this many entries, and a third of them, are stale
# (so stale entries never cost more than half the live ones).
COMPACT_MIN = 1024


class Schedule(Generic[K]):
    def __init__(self, alive: Mapping[str, Callable[[K, float], bool]]) -> None:
        self._alive = alive  # by kind: whether an entry of that kind (key, at) still counts
        self._heap: list[tuple[float, int, int, str, K]] = []
        self._seq = itertools.count()
        self._stale = 0  # entries the owner reported stale, still in the heap

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, at: float, kind: str, key: K, order: int = 0) -> None:
        """Schedule ``key``'s deadline of ``kind`` at ``at``; among entries
        due at the same moment, a lower ``order`` comes out first (equal
        ones in the order added)."""
        heapq.heappush(self._heap, (at, order, next(self._seq), kind, key))

    def entries(self) -> Iterator[tuple[float, str, K]]:
        """Every entry in the heap, stale ones too, in no order: for tests
        and diagnostics, which should not read the heap's layout."""
        return ((e[0], e[3], e[4]) for e in self._heap)

    def stale(self) -> None:
        """One entry in the heap no longer counts (its key moved on): a hint
        for the rebuild, never needed for correctness."""
        self._stale += 1

    def next_at(self) -> float | None:
        """When the earliest live deadline is due; None when there is none."""
        heap = self._heap
        while heap and not self._alive[heap[0][3]](heap[0][4], heap[0][0]):
            heapq.heappop(heap)
            self._stale = max(0, self._stale - 1)
        if self._stale > COMPACT_MIN and 3 * self._stale > len(heap):
            heap = self._heap = [e for e in heap if self._alive[e[3]](e[4], e[0])]
            heapq.heapify(heap)
            self._stale = 0
        return heap[0][0] if heap else None

    def pop_due(self, now: float) -> Iterator[tuple[str, K]]:
        """Take the live deadlines due by ``now``, earliest first (ties by
        order, then in the order added). Lazy: the caller may add deadlines as it goes, and
        one due by ``now`` comes out in the same walk."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, _, kind, key = heapq.heappop(heap)
            if self._alive[kind](key, at):
                yield kind, key
            else:
                self._stale = max(0, self._stale - 1)


# ---- the kinds of deadline ------------------------------------------------

class DeadlineOwner(Protocol):
    """What a deadline kind reads of what schedules it (``Deadlines``)."""

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
    # The key: the request, for a question's kinds; a user id for the away's.
    when: Callable[[DeadlineOwner, Any], float | None]
    alive: Callable[[DeadlineOwner, Any], bool]
    fire: Callable[[DeadlineOwner, Any, float], Change | None]
    # Whether the kind can come up at all in this registry for a request
    # with (True) or without escalation steps: the registry looks only at
    # those (``Deadlines.plan``); ``when`` says None for the rest anyway.
    can: Callable[[DeadlineOwner, bool], bool] = lambda reg, stepped: True


# A deadline whose handling raised is tried again after this long, doubled
# at each failure up to the cap: never a hot loop, never more than a minute
# late once whatever failed is mended.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class DeadlineFailure:
    """A due deadline whose kind raised when it fired (``Deadlines.due``): kept,
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
    # The next escalation step's time, ``createdAt + afterSeconds``: the
    # ask's ``escalate`` steps (protocol section 5).
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


#: The end of an away, at its ``until``: a deadline on the registry's one
#: schedule (``Deadlines``), keyed by the user's id, not a request: scheduled by
#: the away's start (``Deadlines.away_planned``), never planned for a question
#: (``can``). ``when`` reads the away held now, so an entry at an ``until``
#: the away no longer has does not count; ``fire`` ends it only at that
#: ``until`` (compare and set, as every node's clock may decide it).
AWAY_DEADLINE = DeadlineKind(
    "away",
    False,
    lambda reg, user: reg.away_until(user),  # type: ignore[attr-defined]
    lambda reg, user: reg.away_until(user) is not None,  # type: ignore[attr-defined]
    lambda reg, user, now: AwayEnded(user, reg.away_until(user)),  # type: ignore[attr-defined]
    lambda reg, stepped: False,
)


# ---- the registry's part -------------------------------------------------

class Deadlines:
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
        self._online = online  # whether a user has a connection open
        self._clock = clock
        self._box = box  # the outbox being filled: its ``notify``
        self._kinds = {kind.name: kind for kind in (*DEADLINE_KINDS, AWAY_DEADLINE)}  # and aways' ends
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

    # ---- aways: a user away, their questions also go to delegates --------

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
            return  # seen online at the due moment: no webhook (``only_offline``: webhooks are for people not there)
        self._box.notify.append(req)

    def remind_when(self, req: Request) -> float | None:
        """When the question's next reminder is due (``reminders.when``)."""
        return reminders.when(req, self._reminded.get(req, 0))

    def remind_due(self, req: Request) -> None:
        """The question's next reminder came: reported for those of its
        audience (away users left out, as notify_users does) with no connection
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
