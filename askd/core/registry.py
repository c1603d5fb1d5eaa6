"""The registry: sessions, pending questions, results and who is connected.

A plain synchronous object with no I/O, in the sans-I/O style of ``h11`` and
``websockets``. A front end feeds it events: those that only concern
connections (``connect``, ``subscribe``, ``disconnect``) apply at once;
those that change a question are decided first, as data (``prepare_ask``,
``prepare_answer``, ``prepare_withdraw``, ``prepare_cancel``, and ``due``
when the clock reaches ``next_deadline()``), and applied (``apply``) once
the front end's store took them. The front end then takes what must happen
from ``drain()``: frames to send to connections, requests that ended (so
that agents waiting on them can be woken), questions due for a webhook.
The clock is injected; tests move it.

This is a thin front over parts, each owning its state: the session book
(``sessions.py``: the session tree, keys, counts and bytes held), the
connections (``connections.py``: who is connected, subscriptions, replay),
the reservations (``reservations.py``: the asks in flight), the
deadlines (``deadlines.py``: the one schedule of deadlines, webhooks due)
and the effects (``effects.py``). The decisions (``decisions.py``: every
``prepare_*``, the ask's too) are the registry's own methods, inherited
from ``Decisions``, not a part it forwards to.
What can change when is one table, ``rules.py``: ``apply`` and ``taking``
both run it. Who each question is for is ``audiences.py``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from askd.core import rules
from askd.core.audiences import Audiences
from askd.core.away import Away
from askd.core.changes import Asked, Change
from askd.core.connections import Connections
from askd.core.deadlines import DeadlineFailure, Deadlines
from askd.core.decisions import Decisions
from askd.core.effects import Apply
from askd.core.records import (
    ALL_SESSIONS,
    AskInput,
    Connection,
    Counters,
    Limits,
    NotifyPolicy,
    Outbox,
    Request,
    Session,
)
from askd.core.reservations import Reservations
from askd.core.sessions import SessionBook

__all__ = [
    "ALL_SESSIONS",
    "AskInput",
    "Connection",
    "Counters",
    "Limits",
    "NotifyPolicy",
    "Outbox",
    "Registry",
    "Request",
    "Session",
]


class Registry(Decisions):
    def __init__(
        self,
        limits: Limits | None = None,
        *,
        clock: Callable[[], float] = time.time,
        # 128 random bits as 32 hex digits: uuid4().hex without the UUID object it builds (a quarter of the cost).
        new_id: Callable[[], str] = partial(secrets.token_hex, 16),
        notify: NotifyPolicy | None = None,
    ) -> None:
        self.limits = limits = limits or Limits()
        self.notify_policy = notify  # None: no webhook, nothing is ever due; fixed
        self.counters = counters = Counters()
        self._clock = clock
        self.audiences = audiences = Audiences()  # the groups, and who each question is for now
        self._box = box = Outbox([], [], [])  # what the parts queue for the next drain
        self._book = book = SessionBook(audiences)
        self._connections = connections = Connections(book, audiences, counters, clock, box)
        online = connections.user_conns.__contains__  # whether a user has a connection open
        self._deadlines = deadlines = Deadlines(limits, notify, clock, book.get, audiences, online, box)
        self.schedule = deadlines.schedule
        self._reservations = reservations = Reservations(book)
        self._new_id, self._online = new_id, online  # what an ask's decision reads (decisions.py)
        self._effects = effects = Apply(book, connections, reservations, deadlines, audiences, counters, box)
        # The rule table bound to these parts: apply's one lookup per change.
        self._rules = rules.bind(effects, rules.View(book.get, audiences.groups.get, audiences.aways.get))

    # ---- output -------------------------------------------------------

    def drain(self) -> Outbox:
        """Take what the events so far ask the front end to do."""
        box = self._box
        out = Outbox(box.sends, box.ended, box.notify)
        box.sends, box.ended, box.notify = [], [], []
        return out

    def drain_reminders(self) -> list[tuple[Request, int, list[str], list[str]]]:
        """Take the reminders due (askd.core.reminders): (question, k from 1,
        its audience, those of it with no connection here)."""
        out, self._deadlines.reminders = self._deadlines.reminders, []
        return out

    # ---- connections (connections.py) ----------------------------------

    def connect(self, conn_id: str, user_id: str, remote: str = "") -> Connection:
        return self._connections.connect(conn_id, user_id, remote)

    def disconnect(self, conn_id: str) -> None:
        """A connection went away. This never ends a question: a
        person may close the page and answer later."""
        self._connections.disconnect(conn_id)

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        """Subscribe and re-push the pending questions (``Connections.subscribe``);
        returns the number of questions re-pushed."""
        return self._connections.subscribe(conn_id, session_id, reply_id)

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self._connections.unsubscribe(conn_id, session_id)

    # ---- decisions: nothing changes until ``apply`` ---------------------

    def reaches(self, session_id: str, agent: str | None) -> bool:
        """Whether an agent token with this ``sub`` may act on the session
        (``Reservations.reaches``)."""
        return self._reservations.reaches(session_id, agent)

    def reach(self, session_id: str, agent: str | None) -> None:
        """Raise ``NotFound`` unless ``reaches``."""
        self._reservations.reach(session_id, agent)

    def release(self, change: Asked) -> None:
        """The ask's commit is over (taken, refused, or failed): what it
        reserved is free again. Applying it releases it too."""
        self._reservations.release(change)

    # ``prepare_ask``, ``prepare_answer``, ``prepare_decline``, ``prepare_approve``,
    # ``prepare_extend``, ``prepare_withdraw``, ``prepare_cancel``,
    # ``prepare_group_set``, ``prepare_group_delete``, ``prepare_away`` and
    # ``prepare_back`` are the registry's own, written in decisions.py
    # (``Decisions``, which this class inherits).

    # ---- applying: rules.py -------------------------------------------

    def apply(self, change: Change) -> bool:
        """Apply a change (made durable first by the front end's store).
        Returns False, changing nothing, when it no longer applies (its
        guard in ``rules.RULES``: the question already ended, or is already
        known or forgotten, ...). Raises ``rules.UnknownChange`` for a kind
        the table does not know."""
        applier = self._rules.get(type(change))
        if applier is None:
            rules.rule_of(change)  # raises UnknownChange
        key, lookup, guard, effect, otherwise = applier  # type: ignore[misc]
        row = lookup(*key(change))
        if guard(change, row):
            effect(row, change)
            return True
        if otherwise is not None:
            otherwise(row, change)
        return False

    def taking(self, changes: Sequence[Change]) -> list[Change]:
        """The changes that would take effect applied in this order, changing
        nothing: what a store that keeps nothing of its own (``memory``)
        reports its commit took. ``apply`` agrees with it change by change:
        both are ``rules.RULES``."""
        return rules.taking(self, changes)

    def group(self, name: str) -> tuple[str, ...] | None:
        """A group's members (None: no such group): its row for the rules."""
        return self.audiences.groups.get(name)

    def away(self, user: str) -> Away | None:
        """A user's away (None: not away): its row for the rules."""
        return self.audiences.aways.get(user)

    # ---- a store's restore (at start) ----------------------------------

    def restore_away(self, user: str, until: float, delegates: Iterable[str]) -> None:
        """Load an away kept by a store (after the groups, before the
        questions). One whose ``until`` passed while no daemon ran ends at
        the next ``due``."""
        self.audiences.aways[user] = Away(until, tuple(delegates))
        self._deadlines.away_planned(user, until)

    def restore_group(self, group: str, members: Iterable[str]) -> None:
        """Load a group kept by a store (before its questions)."""
        self.audiences.restore_group(group, tuple(sorted(set(members))))

    def restore_session(
        self, session_id: str, owner: str, parent_session_id: str | None, agent: str | None = None
    ) -> None:
        """Load a session kept by a store, with its link to its parent (any
        order: a parent named before it is loaded is made then, and gets its
        own agent when it is loaded)."""
        self._book.session(session_id, owner, parent_session_id, agent).agent = agent

    def restore(self, req: Request) -> None:
        """Load a request kept by a store, oldest first, after its session.
        No event is sent; the counters count what the store holds. One whose
        deadline passed while no daemon ran ends (or is forgotten) at the
        next ``due``."""
        self._book.share_ids(req)
        self._effects.register(req, None)
        self.counters.count(req.status)

    # ---- time (deadlines.py) -------------------------------------------

    def next_deadline(self) -> float | None:
        """When ``due()`` next has work to do, in the clock's seconds."""
        return self._deadlines.next_deadline()

    def due(self) -> list[Change]:
        """What the clock has made due by now, changing nothing (``Deadlines.due``).
        A deadline whose kind raises is left out and retried later
        (``drain_deadline_failures``, ``failing_deadlines``)."""
        return self._deadlines.due()

    def drain_deadline_failures(self) -> list[DeadlineFailure]:
        """Take the deadline failures since the last drain (one per failed
        try), for the front end's log."""
        out, self._deadlines.failures = self._deadlines.failures, []
        return out

    def failing_deadlines(self) -> list[DeadlineFailure]:
        """The deadlines that failed and are still to be retried (``Deadlines.failing``)."""
        return self._deadlines.failing()

    def notify_due(self, req: Request, *, again: bool = False) -> None:
        """Report a webhook due (``Deadlines.notify_due``)."""
        self._deadlines.notify_due(req, again=again)

    # ---- queries ------------------------------------------------------

    def get(self, session_id: str, request_id: str) -> Request | None:
        """A pending request, or an ended one whose result is still kept."""
        return self._book.get(session_id, request_id)

    def owner(self, session_id: str) -> str | None:
        return self._book.owner(session_id)

    def pending(self, session_id: str | None = None, user_id: str | None = None) -> list[Request]:
        """Pending requests, oldest first (``SessionBook.pending``)."""
        return self._book.pending(session_id, user_id)

    def session_users(self, session_id: str) -> set[str]:
        """Whom the session is for (``SessionBook.session_users``)."""
        return self._book.session_users(session_id)

    def connection(self, conn_id: str) -> Connection:
        return self._connections.conns[conn_id]

    def connections(self, user_id: str | None = None) -> list[Connection]:
        return self._connections.connections(user_id)

    def connections_for_session(self, session_id: str) -> list[Connection]:
        """Connections that get this session's events on subscribe."""
        return self._connections.connections_for_session(session_id)

    def stats(self) -> dict[str, int]:
        c = self.counters
        return {
            "connections": len(self._connections.conns),
            "users": len(self._connections.user_conns),
            "sessions": len(self._book.sessions),
            "pending": self._book.held.n - self._reservations.in_flight,
            "asked": c.asked,
            "answered": c.answered,
            "timedOut": c.timeout,
            "cancelled": c.cancelled,
            "declined": c.declined,
            "repushed": c.repushed,
        }
