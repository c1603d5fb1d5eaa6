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

It holds parts, each owning its state: the session book (``sessions.py``:
the session tree, keys, counts and bytes held), the connections
(``connections.py``: who is connected, subscriptions, replay), the
reservations (``reservations.py``: the asks in flight), the deadlines
(``deadlines.py``: the one schedule of deadlines, webhooks due) and the
effects (``effects.py``). It hands no call on to them: what a front end
asks of a part (``get``, ``connect``, ``due``, ...) is the part's own
method, bound once as the registry's in ``__init__`` (the table there says
which part answers). The decisions (``decisions.py``: every ``prepare_*``,
the ask's too) are the registry's own methods, inherited from
``Decisions``. What is written here is what needs more than one part:
``apply``, ``taking``, ``drain``, the restore, ``stats``.
What can change when is one table, ``rules.py``: ``apply`` and ``taking``
both run it. Who each question is for is ``audiences.py``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from askd.core.registry import rules
from askd.core.registry.audiences import Audiences
from askd.core.away import Away
from askd.core.changes import Asked, Change
from askd.core.registry.connections import Connections
from askd.core.registry.deadlines import DeadlineFailure, Deadlines
from askd.core.registry.decisions import Decisions
from askd.core.registry.effects import Apply
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
from askd.core.registry.reservations import Reservations
from askd.core.registry.sessions import SessionBook

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
        self._rows = rows = rules.View(book.get, audiences.groups.get, audiences.aways.get)
        self._rules = rules.bind(effects, rows)

        # What a front end asks of one part is that part's own method, bound
        # here once: no call is handed on between (as the decisions are the
        # registry's own, inherited), and a reader sees below which part answers.
        # Connections (connections.py); a disconnect never ends a question.
        self.connect = connections.connect
        self.disconnect = connections.disconnect
        self.subscribe = connections.subscribe  # returns how many questions it re-pushed
        self.unsubscribe = connections.unsubscribe
        self.connections = connections.connections
        # Which sessions an agent token's ``sub`` reaches, and an ask's
        # reservation freed once its commit is over (reservations.py).
        self.reaches = reservations.reaches
        self.reach = reservations.reach  # raises NotFound unless ``reaches``
        self.release = reservations.release
        # The session book's reads (sessions.py).
        self.get = book.get
        self.owner = book.owner
        self.pending = book.pending
        self.session_users = book.session_users
        # A group's members and a user's away (None: none), as the rules read
        # them: with ``get``, the registry is the rows ``rules.taking`` reads.
        self.group = audiences.groups.get
        self.away = audiences.aways.get
        # Time (deadlines.py): ``due`` changes nothing; a deadline whose kind
        # raises is left out and retried later (``failing_deadlines``).
        self.next_deadline = deadlines.next_deadline
        self.due = deadlines.due
        self.failing_deadlines = deadlines.failing

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

    # ---- decisions: nothing changes until ``apply`` ---------------------

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
        return rules.taking(self._rows, changes)

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

    def drain_deadline_failures(self) -> list[DeadlineFailure]:
        """Take the deadline failures since the last drain (one per failed
        try), for the front end's log."""
        out, self._deadlines.failures = self._deadlines.failures, []
        return out

    # ---- queries ------------------------------------------------------

    def connection(self, conn_id: str) -> Connection:
        return self._connections.conns[conn_id]

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
