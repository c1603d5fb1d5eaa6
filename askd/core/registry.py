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

Every deadline is one entry in one :class:`~askd.core.schedule.Schedule`,
named by its kind (``deadlines.DEADLINE_KINDS``), so the front end needs a single
timer at ``next_deadline()`` and no scan of everything. The records are in
``records.py``, the question lifecycle in ``lifecycle.py``, who each
question is for (groups, teams, escalation) in ``audiences.py``.
"""

from __future__ import annotations

import itertools
import secrets
import time
from functools import partial
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from askd.core import events as ev
from askd.core import codec
from askd.core.audiences import Audiences
from askd.core.budgets import Tally, check_bytes, check_count
from askd.core.changes import Asked, Change, Ended, Escalated, Extended, GroupDeleted, GroupSet, Notified
from askd.core.deadlines import DEADLINE_KINDS, DeadlineKind, escalate_when
from askd.core.errors import (
    AskInFlight,
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    NotFound,
    NotAllowed,
    NotPending,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.events import Event, Send, isotime
from askd.core.lifecycle import (
    CANCEL_ERROR,
    REASSIGNED,
    WITHDRAW_ERROR,
    Status,
    Trigger,
    next_status,
)
from askd.core.models import Answers, check_answers
from askd.core.receipted import ended_digest
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
    audience_key,
)
from askd.core.schedule import Schedule
from askd.core.selectors import subscribed
from askd.core.smallmap import SmallMap

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



def _invalid(loc: str, msg: str) -> InvalidRequest:
    """An ask's field at fault, named in ``details`` as pydantic's errors are."""
    return InvalidRequest(f"{loc}: {msg}", [{"loc": loc, "msg": msg}])

class Registry:
    def __init__(
        self,
        limits: Limits | None = None,
        *,
        clock: Callable[[], float] = time.time,
        # 128 random bits as 32 hex digits: uuid4().hex without the UUID object it builds (a quarter of the cost).
        new_id: Callable[[], str] = partial(secrets.token_hex, 16),
        notify: NotifyPolicy | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.notify_policy = notify  # None: no webhook, nothing is ever due; fixed (``_plans`` reads it once)
        self.counters = Counters()
        self._clock = clock
        self._new_id = new_id
        self._sessions: dict[str, Session] = {}
        # Most users hold one session and one tab: SmallMaps, not dicts.
        self._user_sessions: dict[str, SmallMap[str, None]] = {}  # owner -> its session ids, in order
        self._conns: dict[str, Connection] = {}
        self._user_conns: dict[str, SmallMap[str, Connection]] = {}
        # What pending questions hold, and asks being committed reserve (budgets.py).
        self._held = Tally()
        self._order = itertools.count(1)  # Request.order: the order questions came in
        # Asks prepared and not yet applied or released (being committed),
        # by request and by session: what they reserve counts for the next.
        self._flying: dict[str, Request] = {}
        self._flying_in: dict[str, list[Request]] = {}
        self._kinds = {kind.name: kind for kind in DEADLINE_KINDS}
        # The kinds a request can have, by (ended, has escalation steps),
        # decided once: a one-user question without a webhook policy has
        # only its timeout, then its forget (each kind looked at costs a call).
        self._plans = {
            (ended, stepped): tuple(k for k in DEADLINE_KINDS if k.ended is ended and k.can(self, stepped))
            for ended in (False, True)
            for stepped in (False, True)
        }
        self.schedule: Schedule[Request] = Schedule({k.name: partial(self._counts, k) for k in DEADLINE_KINDS})
        self._sends: list[Send] = []
        self._ended: list[Request] = []
        self._notify: list[Request] = []
        self.audiences = Audiences()  # the groups, and who each question is for now

    def _counts(self, kind: DeadlineKind, req: Request, at: float) -> bool:
        """A schedule entry counts while its kind's deadline for the request
        is still alive and still at that time (an extension moved a timeout:
        the entry at the old time is stale)."""
        return kind.alive(self, req) and kind.when(self, req) == at

    # ---- output -------------------------------------------------------

    def drain(self) -> Outbox:
        """Take what the events so far ask the front end to do."""
        out = Outbox(self._sends, self._ended, self._notify)
        self._sends, self._ended, self._notify = [], [], []
        return out

    def _send_to_users(self, users: Iterable[str], event: Event) -> None:
        to = tuple(c for u in sorted(users) for c in self._user_conns.get(u, ()))
        if to:
            self._sends.append(Send(to, event))

    def _send_to_audience(self, req: Request, event: Event) -> None:
        """Send to whom the question is asked of now (``Audiences.of``). A
        question of one user (no team, no steps: the usual one) goes to that
        user's tabs without a set of one built and sorted (docs/performance.md)."""
        if req.request_id in self.audiences.team:
            self._send_to_users(self.audiences.resolve(req.to), event)
            return
        conns = self._user_conns.get(req.user_id)
        if conns:
            self._sends.append(Send(tuple(conns), event))

    # ---- connections --------------------------------------------------

    def connect(self, conn_id: str, user_id: str, remote: str = "") -> Connection:
        if conn_id in self._conns:
            raise ValueError(f"connection {conn_id} is already connected")
        conn = Connection(conn_id, user_id, self._clock(), remote)
        self._conns[conn_id] = conn
        conns = self._user_conns.get(user_id)
        if conns is None:
            conns = self._user_conns[user_id] = SmallMap()
        conns[conn_id] = conn
        return conn

    def disconnect(self, conn_id: str) -> None:
        """A connection went away. This never ends a question (seed D1)."""
        conn = self._conns.pop(conn_id, None)
        if conn is None:
            return
        conns = self._user_conns[conn.user_id]
        del conns[conn_id]
        if not conns:
            del self._user_conns[conn.user_id]

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        """Subscribe and re-push the pending questions (seed D4).

        For one session: a ``session_snapshot`` then each pending question,
        oldest first. For ``*``: the same for every session of the user that
        has pending questions. Snapshots echo ``reply_id`` (the subscribe
        frame's ``id``). Returns the number of questions re-pushed."""
        conn = self._conns[conn_id]
        if session_id == ALL_SESSIONS:
            conn.subscriptions[ALL_SESSIONS] = None
            pushed = 0
            sids = dict.fromkeys(self._user_sessions.get(conn.user_id, ()))
            # and every session with a pending question whose audience holds the user
            sids.update((r.session_id, None) for r in self.audiences.asked_of(conn.user_id))
            for sid in sids:
                session = self._sessions[sid]
                if session.pending:
                    pushed += self._replay(conn, sid, session, reply_id)
            return pushed
        session = self._sessions.get(session_id)
        if session is not None and not self.audiences.may_subscribe(conn.user_id, session):
            raise Forbidden(f"session {session_id} belongs to another user")
        conn.subscriptions[session_id] = None
        return self._replay(conn, session_id, session, reply_id)

    def _replay(self, conn: Connection, session_id: str, session: Session | None, reply_id: Any) -> int:
        to = (conn.id,)
        user = conn.user_id
        pending = [r for r in session.requests.values() if r.pending and self.audiences.holds(user, r)] if session else []
        snapshot = Event(ev.SNAPSHOT, session_id, {"active": bool(pending), "pending": len(pending)}, reply_id)
        self._sends.append(Send(to, snapshot))
        for req in pending:
            self._sends.append(Send(to, req.ask_event()))
        self.counters.repushed += len(pending)
        return len(pending)

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self._conns[conn_id].subscriptions.pop(session_id, None)

    # ---- agents -------------------------------------------------------

    def prepare_ask(self, ask: AskInput) -> tuple[Request, Asked | None]:
        """Check an ask (already valid against the wire model, see
        ``models.AskBody``) and build its request. Applying the ``Asked``
        pushes it to every connection of the user (seed D5). Every limit is
        checked here, once.

        The ask **reserves** what it takes (its session's owner, its
        Idempotency-Key, a pending slot of its session and of askd) until
        it is applied or ``release``d: several asks committed in one batch
        are checked against each other as if applied in turn. A repeated
        ``idempotency_key`` in the same session returns the first request
        and no change; raises :class:`AskInFlight` while the first is still
        being committed."""
        session_id, parent_session_id = ask.session_id, ask.parent_session_id
        # A question's (and its session's) owner is its audience's key: a
        # lone user's id, as in v1, else the set of entries (spec G).
        user_id = audience_key(ask.to) if ask.to else ask.user_id
        idempotency_key, timeout, agent = ask.idempotency_key, ask.timeout, ask.agent
        if ALL_SESSIONS in (session_id, parent_session_id):
            where = "sessionId" if session_id == ALL_SESSIONS else "parentSessionId"
            raise _invalid(where, f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        self.reach(session_id, agent)  # before the owner: another agent's session tells nothing
        session = self._sessions.get(session_id)
        flying = self._flying_in.get(session_id, ())
        owner = session.owner if session is not None else (flying[0].user_id if flying else None)
        if owner is not None and owner != user_id:
            raise SessionOwnerMismatch(f"session {session_id} belongs to another user")
        if idempotency_key is not None:
            scoped = (agent, idempotency_key)  # keys are per agent sub
            prior = session.by_key.get(scoped) if session is not None and session.by_key else None
            if prior is not None:
                return prior, None
            if any(r.idempotency_key == idempotency_key and r.agent == agent for r in flying):
                raise AskInFlight(f"an ask with this Idempotency-Key in session {session_id} is being stored")
        if parent_session_id is not None:
            self.reach(parent_session_id, agent)
            self._check_parent(session_id, session, parent_session_id, user_id)
        self.audiences.check_entries(ask)
        if ask.require_online and not any(u in self._user_conns for u in self.audiences.resolve(ask.to or (user_id,))):
            raise UserOffline(f"no user of {', '.join(ask.to or (user_id,))} has an open connection")
        in_session = (session.pending if session is not None else 0) + len(flying)
        if in_session >= self.limits.max_pending_per_session:
            raise TooManyPending(
                f"session {session_id} already has {in_session} pending questions "
                f"(limit {self.limits.max_pending_per_session})"
            )
        check_count(self.limits, self._held, agent)
        timeout = self.limits.question_timeout if timeout is None else timeout
        if not 0 < timeout <= self.limits.max_timeout:
            raise _invalid("timeoutSeconds", f"must be > 0 and at most max_timeout_seconds ({self.limits.max_timeout:g})")
        if not 0 <= ask.max_extension <= self.limits.max_timeout:
            raise _invalid("maxExtensionSeconds", f"must be >= 0 and at most max_timeout_seconds ({self.limits.max_timeout:g})")
        for i, (after, _) in enumerate(ask.escalate):
            msg = None
            if not 0 < after < timeout:
                msg = f"must be > 0 and below the question's timeout ({timeout:g} s)"
            elif i and after <= ask.escalate[i - 1][0]:
                msg = "must be greater than the step before's"
            if msg is not None:
                raise _invalid(f"escalate.{i}.afterSeconds", msg)

        if session is not None:
            # The session's own id and owner strings (equal, as checked above),
            # not one more copy of each per question, as ``restore`` does.
            session_id, user_id = session.id, session.owner
        now = self._clock()
        req = Request(
            self._new_id(), session_id, user_id, now, now + timeout, idempotency_key=idempotency_key, agent=agent,
            escalate=ask.escalate,
        )
        req.max_extension, req.on_timeout = ask.max_extension, ask.on_timeout
        # Only the encoded frame is kept: pushes wrap it (Request.ask_event).
        req.frame = ev.encode(
            {
                "type": ev.ASK,
                "sessionId": session_id,
                "payload": {
                    "requestId": req.request_id,
                    "questions": ask.questions,
                    "metadata": ask.metadata if ask.metadata is not None else {},
                    "createdAt": isotime(req.created_at),
                    "expiresAt": isotime(req.expires_at),
                },
            }
        )
        check_bytes(self.limits, self._held, user_id, agent, len(req.frame))
        parent = session.parent if session is not None and session.parent is not None else parent_session_id
        self._flying[req.request_id] = req
        self._held.add(user_id, agent, len(req.frame))  # counted from now: applying keeps it
        self._flying_in.setdefault(session_id, []).append(req)
        return req, Asked(req, parent, session_known=session is not None and session.parent == parent)

    def reaches(self, session_id: str, agent: str | None) -> bool:
        """Whether an agent token with this ``sub`` may act on the session:
        a token without one reaches every session; one with a sub, a session
        it first asked in, or one nobody asked in yet (nor is asking in)."""
        if agent is None:
            return True
        session = self._sessions.get(session_id)
        if session is not None:
            return session.agent == agent
        flying = self._flying_in.get(session_id)
        return not flying or flying[0].agent == agent

    def reach(self, session_id: str, agent: str | None) -> None:
        """Raise :class:`NotFound` unless ``reaches``: the same answer as for
        a session askd does not know, naming nobody."""
        if not self.reaches(session_id, agent):
            raise NotFound(f"no session {session_id} for this agent token")

    def release(self, change: Asked) -> None:
        """The ask's commit is over (taken, refused, or failed): what it
        reserved is free again. Applying it releases it too."""
        req = self._unreserve(change)
        if req is not None:
            self._held.take(req.user_id, req.agent, len(req.frame or b""))

    def _unreserve(self, change: Asked) -> Request | None:
        """The ask is no longer in flight; returns it if it was (prepared
        here), its budgets still counted."""
        req = self._flying.pop(change.request.request_id, None)
        if req is not None:
            flying = self._flying_in[req.session_id]
            flying.remove(req)
            if not flying:
                del self._flying_in[req.session_id]
        return req

    def _register(self, req: Request, parent_session_id: str | None, counted: bool = False) -> None:
        """Put a request (pending or ended) in its session, linking the
        session to its parent, and schedule its next deadline. ``counted``:
        its budgets are counted already (an ask prepared here)."""
        session = self._session(req.session_id, req.user_id, parent_session_id, req.agent)
        session.requests[req.request_id] = req
        req.order = next(self._order)
        if req.idempotency_key is not None:
            if session.by_key is None:
                session.by_key = {}
            session.by_key[(req.agent, req.idempotency_key)] = req
        if req.pending:
            self.audiences.track(req)
            session.pending += 1
            if not counted:  # another node's ask, or a restored one
                self._held.add(req.user_id, req.agent, len(req.frame or b""))
            policy = self.notify_policy
            if policy is not None and policy.after <= 0 and not req.notified:
                self.notify_due(req)  # due at once: reported with the ask itself
        self._plan(req)

    def _unplan(self, req: Request) -> None:
        """A request ended: its entries of the pending kinds that are not due
        yet stay in the schedule, stale, until they reach the top. (One due
        already was taken by ``due``, or soon is, and not counted: whichever
        node's ``Ended`` applies on a shared store.)"""
        now = self._clock()
        for kind in self._plans[False, bool(req.escalate)]:
            at = kind.when(self, req)
            if at is not None and at > now:
                self.schedule.stale()

    def _plan(self, req: Request) -> None:
        """Schedule the request's deadlines of every kind for where it is in
        its life (pending or ended), from its own fields."""
        for kind in self._plans[not req.pending, bool(req.escalate)]:
            at = kind.when(self, req)
            if at is not None:
                self.schedule.add(at, kind.name, req, req.order)

    def _session(self, session_id: str, owner: str, parent_session_id: str | None, agent: str | None) -> Session:
        """The session, made if new (the agent's: it asks first), linked to
        its parent if it had none (a parent it names is made the agent's too)."""
        session = self._sessions.get(session_id) or self._new_session(session_id, owner, agent)
        if parent_session_id is not None and session.parent is None:
            parent = self._sessions.get(parent_session_id) or self._new_session(parent_session_id, owner, agent)
            session.parent = parent.id
            if parent.children is None:
                parent.children = set()
            parent.children.add(session.id)
        return session

    # ---- a store's restore (at start) ----------------------------------

    def restore_session(
        self, session_id: str, owner: str, parent_session_id: str | None, agent: str | None = None
    ) -> None:
        """Load a session kept by a store, with its link to its parent (any
        order: a parent named before it is loaded is made then, and gets its
        own agent when it is loaded)."""
        session = self._session(session_id, owner, parent_session_id, agent)
        session.agent = agent

    def restore(self, req: Request) -> None:
        """Load a request kept by a store, oldest first, after its session.
        No event is sent; the counters count what the store holds. One whose
        deadline passed while no daemon ran ends (or is forgotten) at the
        next ``due``."""
        session = self._sessions.get(req.session_id)
        if session is not None:
            # One copy of the session's and owner's ids, shared with the
            # session as an ask shares them, not a copy more per question
            # (about 110 bytes each; docs/performance.md, B5).
            req.session_id = session.id
            if req.user_id == session.owner:
                req.user_id = session.owner
        self._register(req, None)
        self.counters.count(req.status)

    def _check_parent(self, session_id: str, session: Session | None, parent_id: str, user_id: str) -> None:
        if parent_id == session_id:
            raise _invalid("parentSessionId", "a session cannot be its own parent")
        if session is not None and session.parent not in (None, parent_id):
            raise _invalid("parentSessionId", f"session {session_id} already has parent session {session.parent}")
        parent = self._sessions.get(parent_id)
        if parent is None:
            return
        if parent.owner != user_id:
            raise SessionOwnerMismatch(f"parent session {parent_id} belongs to another user")
        # Refuse a cycle: the new parent must not descend from this session.
        node: Session | None = parent
        while node is not None:
            if node.id == session_id:
                raise _invalid("parentSessionId", f"session {parent_id} descends from {session_id}: a cycle")
            node = self._sessions.get(node.parent) if node.parent else None

    def _new_session(self, session_id: str, owner: str, agent: str | None) -> Session:
        session = Session(session_id, owner, agent=agent)
        self._sessions[session_id] = session
        owned = self._user_sessions.get(owner)
        if owned is None:
            owned = self._user_sessions[owner] = SmallMap()
        owned[session_id] = None
        return session

    def prepare_answer(
        self,
        session_id: str,
        request_id: str,
        answers: Answers,
        *,
        user_id: str | None = None,
        via: str = "ws",
        answered_by: str | None = None,
    ) -> Ended:
        """Check an answer to a pending question; ``user_id`` None answers as
        an admin. Raises :class:`NotPending` when it is not pending for this
        user (ended, unknown, or another user's) and :class:`InvalidAnswer`
        when the answers do not fit its questions. The result names
        ``answered_by`` (default: ``user_id``) and ``via``."""
        req = self._pending_for(session_id, request_id, user_id)
        # The check reads the questions' texts and multiSelect flags, no number.
        problem = self.check_answers(req.ask_payload(exact_numbers=False)["questions"], answers)
        if problem:
            raise InvalidAnswer(problem)
        by = user_id if answered_by is None else answered_by
        return self._ending(req, Trigger.ANSWER, answers=answers, answered_by=by, via=via)

    @staticmethod
    def check_answers(questions: list[dict[str, Any]], answers: Answers) -> str | None:
        """What is wrong with ``answers`` to these questions, or None."""
        return check_answers(answers, {q["question"]: bool(q.get("multiSelect", False)) for q in questions})

    def _pending_for(self, session_id: str, request_id: str, user_id: str | None) -> Request:
        """The pending question ``user_id`` (None: an admin) may act on."""
        req = self.get(session_id, request_id)
        if req is None or not req.pending or (user_id is not None and not self.audiences.holds(user_id, req)):
            raise NotPending(f"question {request_id} is not pending")
        return req

    def prepare_decline(
        self,
        session_id: str,
        request_id: str,
        reason: str | None = None,
        *,
        user_id: str | None = None,
        via: str = "ws",
        answered_by: str | None = None,
    ) -> Ended:
        """The person refuses to answer: the question ends ``declined``.
        Raises :class:`NotPending` as ``prepare_answer`` does."""
        req = self._pending_for(session_id, request_id, user_id)
        by = user_id if answered_by is None else answered_by
        return self._ending(req, Trigger.DECLINE, answered_by=by, via=via, reason=reason)

    def prepare_extend(self, session_id: str, request_id: str, seconds: float, *, user_id: str | None = None) -> Extended:
        """Move a pending question's deadline later. From a person
        (``user_id``): by ``seconds`` or what is left of its allowance
        (``maxExtensionSeconds``), :class:`NotAllowed` when nothing is left.
        From the agent (``user_id`` None): by ``seconds``, without using the
        allowance, :class:`NotAllowed` past ``max_timeout`` plus the allowance
        from its creation. :class:`NotPending` when it is not pending (for
        this user)."""
        req = self._pending_for(session_id, request_id, user_id)
        extended = req.extended
        if user_id is not None:
            left = req.max_extension - req.extended
            if left <= 0:
                raise NotAllowed(f"question {request_id} allows no more time")
            seconds = min(seconds, left)
            extended += seconds
        expires_at = req.expires_at + seconds
        if user_id is None and expires_at > req.created_at + self.limits.max_timeout + req.max_extension:
            raise NotAllowed(
                f"question {request_id} may live at most max_timeout_seconds ({self.limits.max_timeout:g}) "
                f"plus its maxExtensionSeconds ({req.max_extension:g}) from its creation"
            )
        frame = codec.loads(req.frame or b"")
        frame["payload"]["expiresAt"] = isotime(expires_at)
        return Extended(req.session_id, req.request_id, req.expires_at, expires_at, extended, ev.encode(frame))

    def prepare_withdraw(
        self, session_id: str, request_id: str, agent: str | None = None
    ) -> tuple[Request | None, Ended | None]:
        """The agent takes one question back: a pending one ends
        ``cancelled``; an ended one stays as it is. None when unknown (to
        this agent: in another agent's session, as if unknown)."""
        req = self.get(session_id, request_id) if self.reaches(session_id, agent) else None
        if req is None or not req.pending:
            return req, None
        return req, self._ending(req, Trigger.CANCEL, error=WITHDRAW_ERROR)

    def prepare_cancel(self, session_id: str, agent: str | None = None) -> list[Ended]:
        """End every pending question of the session and of its descendants
        as ``cancelled`` (seed ``failAllForSession``). Raises
        :class:`NotFound` for another agent's session."""
        self.reach(session_id, agent)
        root = self._sessions.get(session_id)
        if root is None:
            return []
        return [
            self._ending(req, Trigger.CANCEL, error=CANCEL_ERROR)
            for session in self._descendants(root)
            for req in session.requests.values()
            if req.pending
        ]

    def _ending(
        self,
        req: Request,
        trigger: Trigger,
        *,
        answers: Answers | None = None,
        error: str | None = None,
        answered_by: str | None = None,
        via: str | None = None,
        reason: str | None = None,
    ) -> Ended:
        next_status(req.status, trigger)  # raises on a move the lifecycle forbids
        return Ended(
            req.session_id, req.request_id, trigger, answers, error, self._clock(), answered_by, via, reason,
            digest=ended_digest(req, answers),
        )

    def _descendants(self, root: Session) -> Iterator[Session]:
        stack = [root]
        while stack:
            session = stack.pop()
            yield session
            stack.extend(self._sessions[c] for c in session.children or ())

    # ---- the end of a question ----------------------------------------

    def apply(self, change: Change) -> bool:
        """Apply a change (made durable first by the front end's store).
        Returns False, changing nothing, when it no longer applies: the
        question already ended, or is already known or forgotten."""
        if isinstance(change, Ended):
            req = self.get(change.session_id, change.request_id)
            if req is None or not req.pending:
                return False
            self._end(req, change)
        elif isinstance(change, Asked):
            reserved = self._unreserve(change)
            req = change.request
            if self.get(req.session_id, req.request_id) is not None:
                if reserved is not None:
                    self._held.take(reserved.user_id, reserved.agent, len(reserved.frame or b""))
                return False
            self._register(req, change.parent_session_id, counted=reserved is not None)
            self.counters.count(req.status)
            self._send_to_audience(req, req.ask_event())
        elif isinstance(change, Escalated):
            req = self.get(change.session_id, change.request_id)
            if req is None or not req.pending or req.escalations >= change.step:
                return False
            self._escalate(req, change.step)
        elif isinstance(change, GroupSet):
            self._set_group(change.group, change.members)
        elif isinstance(change, GroupDeleted):
            if change.group not in self.audiences.groups:
                return False
            self._set_group(change.group, None)
        elif isinstance(change, Notified):
            # A webhook delivery succeeded: never reported again. Only a
            # pending question's mark counts, on every store alike.
            req = self.get(change.session_id, change.request_id)
            if req is None or not req.pending:
                return False
            req.notified = True
        elif isinstance(change, Extended):
            req = self.get(change.session_id, change.request_id)
            if req is None or not req.pending or req.expires_at != change.previous:
                return False
            self._extend(req, change)
        else:
            req = self.get(change.session_id, change.request_id)
            if req is None or req.pending:
                return False
            self._forget(req)
        return True

    def _end(self, req: Request, change: Ended) -> None:
        self._unplan(req)
        req.status = next_status(req.status, change.trigger)
        req.answers = change.answers
        req.error = change.error
        req.ended_at = change.ended_at
        req.answered_by, req.via, req.reason, req.defaulted = change.answered_by, change.via, change.reason, change.defaulted
        req.digest = change.digest
        self._held.take(req.user_id, req.agent, len(req.frame or b""))
        req.frame = None
        session = self._sessions[req.session_id]
        session.pending -= 1
        self.counters.ended(req.status)
        self._plan(req)
        self._send_to_audience(req, Event(ev.CANCELLED, req.session_id, req.end_payload()))
        self.audiences.untrack(req)
        self._ended.append(req)

    def _extend(self, req: Request, change: Extended) -> None:
        """A pending question's deadline moved: the entry at the old one
        stays, stale (its kind's ``when`` moved: the schedule lets it pass), a
        new one is added."""
        if change.previous > self._clock():
            self.schedule.stale()
        before, after = len(req.frame or b""), len(change.frame)
        if before != after:  # the budgets count the frame held
            self._held.take(req.user_id, req.agent, before)
            self._held.add(req.user_id, req.agent, after)
        req.expires_at, req.extended, req.frame = change.expires_at, change.extended, change.frame
        self.schedule.add(req.expires_at, "timeout", req, req.order)  # its place among those due with it
        payload = {"requestId": req.request_id, "expiresAt": isotime(req.expires_at)}
        if req.max_extension:
            payload.update(req.allowance_fields())  # so every tab knows whether more is left
        self._send_to_audience(req, Event(ev.EXTENDED, req.session_id, payload))

    def _escalate(self, req: Request, step: int) -> None:
        """Steps up to ``step`` are taken: their entries join the audience,
        who get the question now; those who had it hear whom it is asked of
        now; notifications go out again (spec H)."""
        before = self.audiences.of(req)
        req.escalations = step
        now = self.audiences.of(req)
        self._send_to_users(now - before, req.ask_event())
        payload = {"requestId": req.request_id, "to": req.to, **req.escalation_fields()}
        self._send_to_users(before & now, Event(ev.ESCALATED, req.session_id, payload))
        at = escalate_when(self, req)
        if at is not None:
            self.schedule.add(at, "escalate", req, req.order)
        self.notify_due(req, again=True)

    def _forget(self, req: Request) -> None:
        """Drop an ended request once its result retention has run out."""
        session = self._sessions[req.session_id]
        del session.requests[req.request_id]
        key = req.idempotency_key
        if key is not None and session.by_key and session.by_key.get((req.agent, key)) is req:
            del session.by_key[(req.agent, key)]
        self._collect(session)

    def _collect(self, session: Session | None) -> None:
        """Forget sessions that hold nothing, walking up to their parents."""
        while session is not None and not session.requests and not session.children:
            del self._sessions[session.id]
            owned = self._user_sessions[session.owner]
            del owned[session.id]
            if not owned:
                del self._user_sessions[session.owner]
            parent = self._sessions.get(session.parent) if session.parent else None
            if parent is not None and parent.children is not None:
                parent.children.discard(session.id)
            session = parent

    # ---- groups -------------------------------------------------------

    def prepare_group_set(self, group: str, members: Iterable[str]) -> GroupSet:
        """Replace a group's members (sorted, de-duplicated)."""
        return GroupSet(group, tuple(sorted(set(members))))

    def prepare_group_delete(self, group: str) -> GroupDeleted:
        """Delete a group; raises :class:`NotFound` when there is none."""
        if group not in self.audiences.groups:
            raise NotFound(f"no group {group}")
        return GroupDeleted(group)

    def restore_group(self, group: str, members: Iterable[str]) -> None:
        """Load a group kept by a store (before its questions)."""
        self.audiences.restore_group(group, tuple(sorted(set(members))))

    def _set_group(self, group: str, members: tuple[str, ...] | None) -> None:
        """A group's members are now ``members`` (None: it is gone). The
        pending questions asked of it follow at once: added members get
        them, removed ones lose them (``reassigned``)."""
        for req, gained, lost in self.audiences.set_group(group, members):
            self._send_to_users(gained, req.ask_event())
            gone = Event(ev.CANCELLED, req.session_id, {"requestId": req.request_id, "reason": REASSIGNED})
            self._send_to_users(lost, gone)

    # ---- webhook notifications ----------------------------------------

    def notify_due(self, req: Request, *, again: bool = False) -> None:
        """Report a webhook due; ``again`` after an escalation step, even if
        one was delivered before (for the new audience)."""
        policy = self.notify_policy
        if policy is None or not req.pending or (req.notified and not again):
            return
        if policy.only_offline and any(u in self._user_conns for u in self.audiences.notify_users(req)[1]):
            return  # seen online at the due moment: no webhook (spec E)
        self._notify.append(req)

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
        for kind, req in self.schedule.pop_due(now):
            change = self._kinds[kind].fire(self, req, now)
            if change is not None:
                out.append(change)
        return out

    def taking(self, changes: Sequence[Change]) -> list[Change]:
        """The changes that would take effect applied in this order, changing
        nothing: what a store that keeps nothing of its own (``memory``)
        reports its commit took. ``apply`` agrees with it change by change."""
        seen: dict[tuple[str, str], Status | None] = {}  # what the batch did so far
        deadline: dict[tuple[str, str], float] = {}  # expiresAt as the batch's extensions left it
        groups: dict[str, bool] = {}  # group -> held, as the batch left it
        steps: dict[tuple[str, str], int] = {}  # escalation steps taken, as the batch left them

        def status(sid: str, rid: str) -> Status | None:
            if (sid, rid) in seen:
                return seen[(sid, rid)]
            req = self.get(sid, rid)
            return None if req is None else req.status

        out: list[Change] = []
        for change in changes:
            if isinstance(change, (GroupSet, GroupDeleted)):
                held = groups.get(change.group, change.group in self.audiences.groups)
                groups[change.group] = isinstance(change, GroupSet)
                if isinstance(change, GroupSet) or held:
                    out.append(change)
                continue
            if isinstance(change, Asked):
                key = (change.request.session_id, change.request.request_id)
                took = status(*key) is None
                after: Status | None = Status.PENDING
            else:
                key = (change.session_id, change.request_id)
                now = status(*key)
                if isinstance(change, Ended):
                    took, after = now is Status.PENDING, change.status
                elif isinstance(change, Escalated):
                    req = self.get(*key)
                    taken = steps.get(key, req.escalations if req is not None else 0)
                    took, after = now is Status.PENDING and taken < change.step, now
                    if took:
                        steps[key] = change.step
                elif isinstance(change, Notified):
                    took, after = now is Status.PENDING, now
                elif isinstance(change, Extended):
                    req = self.get(*key)
                    was = deadline.get(key, req.expires_at if req is not None else None)
                    took, after = now is Status.PENDING and was == change.previous, now
                    if took:
                        deadline[key] = change.expires_at
                else:
                    took, after = now not in (None, Status.PENDING), None
            if took:
                seen[key] = after
                out.append(change)
        return out

    # ---- queries ------------------------------------------------------

    def get(self, session_id: str, request_id: str) -> Request | None:
        """A pending request, or an ended one whose result is still kept."""
        session = self._sessions.get(session_id)
        return session.requests.get(request_id) if session else None

    def owner(self, session_id: str) -> str | None:
        session = self._sessions.get(session_id)
        return session.owner if session else None

    def pending(self, session_id: str | None = None, user_id: str | None = None) -> list[Request]:
        """Pending requests, oldest first within each session; a user's
        (``user_id``: their own and their teams'), oldest first."""
        if session_id is not None:
            sessions: Iterable[Session] = [s for s in (self._sessions.get(session_id),) if s]
        elif user_id is not None:
            sessions = [self._sessions[s] for s in self._user_sessions.get(user_id, ())]
        else:
            sessions = self._sessions.values()
        out = [
            r
            for s in sessions
            if s.pending and (user_id is None or s.owner == user_id)
            for r in s.requests.values()
            if r.pending
        ]
        if user_id is not None:  # and those asked of a team the user is in
            mine = {r.request_id for r in out}
            out += [
                r
                for r in self.audiences.team.values()
                if r.request_id not in mine and (session_id is None or r.session_id == session_id) and self.audiences.holds(user_id, r)
            ]
            out.sort(key=lambda r: r.created_at)  # one list, in the order they were asked: own and teams' alike
        return out

    def connection(self, conn_id: str) -> Connection:
        return self._conns[conn_id]

    def connections(self, user_id: str | None = None) -> list[Connection]:
        if user_id is not None:
            conns = self._user_conns.get(user_id)
            return list(conns.values()) if conns else []
        return list(self._conns.values())

    def connections_for_session(self, session_id: str) -> list[Connection]:
        """Connections that get this session's events on subscribe: those
        subscribed to it, and its owner's connections subscribed to ``*``."""
        users = self.session_users(session_id)
        return [c for c in self._conns.values() if subscribed(c, session_id, users)]

    def session_users(self, session_id: str) -> set[str]:
        """Whom the session is for: its owner (the audience of its first
        question, the groups as they are now) and the audience of each of
        its pending questions."""
        session = self._sessions.get(session_id)
        return set() if session is None else self.audiences.session_users(session)

    def stats(self) -> dict[str, int]:
        c = self.counters
        return {
            "connections": len(self._conns),
            "users": len(self._user_conns),
            "sessions": len(self._sessions),
            "pending": self._held.n - len(self._flying),
            "asked": c.asked,
            "answered": c.answered,
            "timedOut": c.timeout,
            "cancelled": c.cancelled,
            "declined": c.declined,
            "repushed": c.repushed,
        }

