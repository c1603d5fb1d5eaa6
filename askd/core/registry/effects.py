"""What a change does once it takes effect: ``rules.Effects``, on the registry's parts.

Whether a change takes effect is its guard in ``rules.RULES``; this is the
effect column, one method per kind, called by ``Registry.apply`` with the
row the change is about (the ``Request``, or a group's members): the
session book, the reservations' tally, the deadlines' schedule, the
connections' sends and the audiences all move together here. ``register`` is also how a
store's restore puts a kept request in.
"""

from __future__ import annotations

from askd.core import events as ev
from askd.core.registry.audiences import Audiences
from askd.core.away import Away, set_away
from askd.core.changes import Approved, Asked, AwayEnded, AwaySet, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.events import Event, isotime
from askd.core.lifecycle import REASSIGNED, next_status
from askd.core.registry.connections import Connections
from askd.core.registry.deadlines import Deadlines
from askd.core.records import Counters, Outbox, Request
from askd.core.registry.reservations import Reservations
from askd.core.registry.sessions import SessionBook


class Apply:
    """The engine's effects (``rules.Effects``), one per kind of change."""

    def __init__(
        self,
        book: SessionBook,
        connections: Connections,
        reservations: Reservations,
        deadlines: Deadlines,
        audiences: Audiences,
        counters: Counters,
        box: Outbox,
    ) -> None:
        self._book = book
        self._connections = connections
        self._reservations = reservations
        self._held = book.held
        self._deadlines = deadlines
        self._audiences = audiences
        self._counters = counters
        self._box = box  # the outbox being filled: its ``ended``

    def register(self, req: Request, parent_session_id: str | None, counted: bool = False) -> None:
        """Put a request (pending or ended) in its session, linking the
        session to its parent, and schedule its next deadline. ``counted``:
        its budgets are counted already (an ask prepared here)."""
        self._book.put(req, parent_session_id)
        if req.pending:
            self._audiences.track(req)
            if not counted:  # another node's ask, or a restored one
                self._held.add(req.user_id, req.agent, len(req.frame or b""))
            policy = self._deadlines.notify_policy
            if policy is not None and policy.after <= 0 and not req.notified:
                self._deadlines.notify_due(req)  # due at once: reported with the ask itself
        self._deadlines.plan(req)

    # ---- rules.Effects ------------------------------------------------

    def take_ask(self, row: None, change: Asked) -> None:
        """A new question: its reservation becomes what it holds; it is
        pushed to its audience."""
        reserved = self._reservations.unreserve(change)
        req = change.request
        self.register(req, change.parent_session_id, counted=reserved is not None)
        self._counters.count(req.status)
        self._connections.send_to_audience(req, req.ask_event())

    def refuse_ask(self, row: Request, change: Asked) -> None:
        """An ask known already (applied twice): only its reservation goes."""
        self._reservations.release(change)

    def end(self, req: Request, change: Ended) -> None:
        self._deadlines.unplan(req)
        req.status = next_status(req.status, change.trigger)
        req.answers = change.answers
        req.error = change.error
        req.ended_at = change.ended_at
        req.answered_by, req.via, req.reason, req.defaulted = change.answered_by, change.via, change.reason, change.defaulted
        req.digest = change.digest
        req.on_behalf_of = change.on_behalf_of
        if change.approval is not None:  # the approval completing the quorum
            req.approval = change.approval
        self._held.take(req.user_id, req.agent, len(req.frame or b""))
        req.frame = None
        self._book.sessions[req.session_id].pending -= 1
        self._counters.ended(req.status)
        self._deadlines.plan(req)
        self._connections.send_to_audience(req, Event(ev.CANCELLED, req.session_id, req.end_payload()))
        self._audiences.untrack(req)
        self._box.ended.append(req)

    def extend(self, req: Request, change: Extended) -> None:
        """A pending question's deadline moved: the schedule follows, every
        connection hears the new one."""
        before, after = len(req.frame or b""), len(change.frame)
        if before != after:  # the budgets count the frame held
            self._held.take(req.user_id, req.agent, before)
            self._held.add(req.user_id, req.agent, after)
        req.expires_at, req.extended, req.frame = change.expires_at, change.extended, change.frame
        self._deadlines.moved(req, change.previous)
        payload = {"requestId": req.request_id, "expiresAt": isotime(req.expires_at)}
        if req.max_extension:
            payload.update(req.allowance_fields())  # so every connection knows whether more is left
        self._connections.send_to_audience(req, Event(ev.EXTENDED, req.session_id, payload))

    def approve(self, req: Request, change: Approved) -> None:
        """An action got an approval short of its quorum: it is kept (every
        re-push carries it), every connection of its audience hears it."""
        req.approval = change.approval
        payload = {"requestId": req.request_id, "approvals": change.approval.wire(), "needed": change.approval.quorum}
        self._connections.send_to_audience(req, Event(ev.VOTED, req.session_id, payload))


    def escalate(self, req: Request, change: Escalated) -> None:
        """Steps up to ``change.step`` are taken: their entries join the
        audience, who get the question now; those who had it hear whom it
        is asked of now; notifications go out again."""
        before = self._audiences.of(req)
        req.escalations = change.step
        now = self._audiences.of(req)
        self._connections.send_to_users(now - before, req.ask_event())
        payload = {"requestId": req.request_id, "to": req.to, **req.escalation_fields()}
        self._connections.send_to_users(before & now, Event(ev.ESCALATED, req.session_id, payload))
        self._deadlines.stepped(req)
        self._deadlines.notify_due(req, again=True)

    def mark_notified(self, req: Request, change: Notified) -> None:
        """A webhook delivery succeeded: never reported again."""
        req.notified = True

    def forget(self, req: Request, change: Forgot) -> None:
        """An ended request's result retention ran out."""
        self._book.drop(req)

    def set_group(self, members: tuple[str, ...] | None, change: GroupSet | GroupDeleted) -> None:
        """A group's members are now the change's (a delete: it is gone).
        The pending questions asked of it follow at once: added members get
        them, removed ones lose them (``reassigned``)."""
        new = change.members if isinstance(change, GroupSet) else None
        for req, gained, lost in self._audiences.set_group(change.group, new):
            self._connections.send_to_users(gained, req.ask_event())
            gone = Event(ev.CANCELLED, req.session_id, {"requestId": req.request_id, "reason": REASSIGNED})
            self._connections.send_to_users(lost, gone)

    def set_away(self, row: Away | None, change: AwaySet | AwayEnded) -> None:
        """A user's away starts, changes or ends: ``away.set_away``."""
        set_away(self._audiences, self._connections, self._deadlines, self._book, change)
