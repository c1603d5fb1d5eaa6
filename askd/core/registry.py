"""The registry: sessions, pending questions, results and who is connected.

A plain synchronous object with no I/O, in the sans-I/O style of ``h11`` and
``websockets``: a front end feeds it events (``connect``, ``subscribe``,
``ask``, ``answer``, ``cancel_session``, ``disconnect``, ``advance`` when the
clock reaches ``next_deadline()``) and then takes what must happen from
``drain()``: frames to send to connections, and requests that ended (so that
agents waiting on them can be woken). The clock is injected; tests move it.

Deadlines (question timeouts, result retention, and webhook notifications
that come due) live in one heap, so the front end needs a single timer at
``next_deadline()`` and no scan of everything. The question lifecycle itself
is in ``lifecycle.py``.
"""

from __future__ import annotations

import heapq
import itertools
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from askd.core import codec
from askd.core import events as ev
from askd.core.changes import Asked, Change, Ended, Forgot, Notified
from askd.core.errors import (
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    NotPending,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.events import Event, Send, isotime
from askd.core.lifecycle import (
    CANCEL_ERROR,
    END_REASON,
    TIMEOUT_ERROR,
    WITHDRAW_ERROR,
    Status,
    Trigger,
    next_status,
)
from askd.core.models import Answers, check_answers
from askd.core.smallmap import SmallMap

ALL_SESSIONS = "*"

# Kinds of heap entries.
_DEADLINE = 0  # a pending question's expiresAt
_FORGET = 1  # an ended question's result retention runs out
_NOTIFY = 2  # a pending question is due for a webhook notification

# Rebuild the heap once this many deadline entries (and most of them) are stale.
_COMPACT_MIN = 1024


@dataclass(slots=True, frozen=True)
class Limits:
    question_timeout: float = 900.0
    max_timeout: float = 86400.0
    result_ttl: float = 600.0
    max_pending_per_session: int = 100
    max_pending_total: int = 100_000
    # Bytes of pending questions (their frames) one user may be asked: one
    # agent cannot fill a person's inbox, and the daemon's memory, alone.
    max_pending_bytes_per_user: int = 16 * 1024 * 1024


@dataclass(slots=True, frozen=True)
class NotifyPolicy:
    """When a pending question is reported in ``Outbox.notify`` (spec E):
    ``after`` seconds from its creation, and with ``only_offline`` only if
    its user has no open connection at that moment."""

    after: float = 0.0
    only_offline: bool = False


@dataclass(slots=True, eq=False)
class Request:
    """One ``ask``: its questions while pending, and once ended, its result.

    The questions and metadata are held only inside the encoded
    ``ask_user_questions`` frame (the bytes every push and re-push sends):
    as parsed Python objects they took four times the memory of their JSON.
    The rare readers (listings, answer checks) decode the frame. Only the
    bytes are kept, not an :class:`Event` around them (80 bytes more per
    pending question): ``ask_event()`` wraps them for each push."""

    request_id: str
    session_id: str
    user_id: str
    created_at: float
    expires_at: float
    frame: bytes | None = None  # the encoded ask_user_questions frame, while pending
    idempotency_key: str | None = None
    status: Status = Status.PENDING
    answers: Answers | None = None
    error: str | None = None
    ended_at: float | None = None
    notified: bool = False  # a webhook delivery for it succeeded (mark_notified)

    @property
    def pending(self) -> bool:
        return self.status is Status.PENDING

    def ask_payload(self) -> dict[str, Any]:
        """The pending question's payload: requestId, questions (exactly as
        the agent sent them), metadata, createdAt, expiresAt."""
        if self.frame is None:
            raise ValueError(f"request {self.request_id} has ended: its questions are gone")
        payload: dict[str, Any] = codec.loads(self.frame)["payload"]
        return payload

    def ask_event(self) -> Event:
        """The pending question's ``ask_user_questions`` event, to push: its
        frame is the kept bytes, not encoded again."""
        if self.frame is None:
            raise ValueError(f"request {self.request_id} has ended: its questions are gone")
        return Event.from_frame(ev.ASK, self.session_id, self.frame, request_id=self.request_id)

    @property
    def questions(self) -> list[dict[str, Any]]:
        questions: list[dict[str, Any]] = self.ask_payload()["questions"]
        return questions

    @property
    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = self.ask_payload()["metadata"]
        return metadata

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requestId": self.request_id,
            "sessionId": self.session_id,
            "status": self.status.value,
        }
        if self.answers is not None:
            out["answers"] = self.answers
        if self.error is not None:
            out["error"] = self.error
        return out

    def describe(self) -> dict[str, Any]:
        """The pending question as listings show it."""
        payload = self.ask_payload()
        return {
            "sessionId": self.session_id,
            "userId": self.user_id,
            "requestId": self.request_id,
            "questions": payload["questions"],
            "metadata": payload["metadata"],
            "createdAt": payload["createdAt"],
            "expiresAt": payload["expiresAt"],
        }


@dataclass(slots=True, eq=False)
class Session:
    id: str
    owner: str
    parent: str | None = None
    # Pending and retained, oldest first. Most sessions hold one: a SmallMap.
    requests: SmallMap[str, Request] = field(default_factory=SmallMap)
    pending: int = 0
    # Made on first use: most sessions have neither, and empty ones cost 280 B.
    children: set[str] | None = None
    by_key: dict[str, Request] | None = None  # Idempotency-Key -> request


@dataclass(slots=True, eq=False)
class Connection:
    id: str
    user_id: str
    connected_at: float
    remote: str = ""
    # A set (values None): most tabs subscribe to one thing, and an empty set costs 216 B.
    subscriptions: SmallMap[str, None] = field(default_factory=SmallMap)

    def describe(self) -> dict[str, Any]:
        return {
            "connectionId": self.id,
            "userId": self.user_id,
            "subscriptions": sorted(self.subscriptions),
            "connectedAt": isotime(self.connected_at),
            "remote": self.remote,
        }


@dataclass(slots=True)
class Counters:
    asked: int = 0
    answered: int = 0
    timeout: int = 0
    cancelled: int = 0
    repushed: int = 0


@dataclass(slots=True)
class Outbox:
    sends: list[Send]
    ended: list[Request]
    notify: list[Request] = field(default_factory=list)  # pending, due for a webhook


class Registry:
    def __init__(
        self,
        limits: Limits | None = None,
        *,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        notify: NotifyPolicy | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.notify_policy = notify  # None: no webhook, nothing is ever due
        self.counters = Counters()
        self._clock = clock
        self._new_id = new_id
        self._sessions: dict[str, Session] = {}
        # Most users hold one session and one tab: SmallMaps, not dicts.
        self._user_sessions: dict[str, SmallMap[str, None]] = {}  # owner -> its session ids, in order
        self._conns: dict[str, Connection] = {}
        self._user_conns: dict[str, SmallMap[str, Connection]] = {}
        self._pending_total = 0
        self._user_bytes: dict[str, int] = {}  # user -> bytes of their pending questions' frames
        self._heap: list[tuple[float, int, int, Request]] = []
        self._seq = itertools.count()
        self._stale = 0  # _DEADLINE entries in the heap whose request already ended
        # Pending requests whose _DEADLINE entry ``due`` popped: their end
        # leaves no stale entry, whoever's ``Ended`` applies (on a shared
        # store another node's timeout may win over this node's).
        self._unscheduled: set[str] = set()
        self._sends: list[Send] = []
        self._ended: list[Request] = []
        self._notify: list[Request] = []

    # ---- output -------------------------------------------------------

    def drain(self) -> Outbox:
        """Take what the events so far ask the front end to do."""
        out = Outbox(self._sends, self._ended, self._notify)
        self._sends, self._ended, self._notify = [], [], []
        return out

    def _send_to_user(self, user_id: str, event: Event) -> None:
        conns = self._user_conns.get(user_id)
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
            for sid in self._user_sessions.get(conn.user_id, ()):
                session = self._sessions[sid]
                if session.pending:
                    pushed += self._replay(conn, sid, session, reply_id)
            return pushed
        session = self._sessions.get(session_id)
        if session is not None and session.owner != conn.user_id:
            raise Forbidden(f"session {session_id} belongs to another user")
        conn.subscriptions[session_id] = None
        return self._replay(conn, session_id, session, reply_id)

    def _replay(self, conn: Connection, session_id: str, session: Session | None, reply_id: Any) -> int:
        to = (conn.id,)
        pending = [r for r in session.requests.values() if r.pending] if session else []
        snapshot = Event(ev.SNAPSHOT, session_id, {"active": bool(pending), "pending": len(pending)}, reply_id)
        self._sends.append(Send(to, snapshot))
        for req in pending:
            self._sends.append(Send(to, req.ask_event()))
        self.counters.repushed += len(pending)
        return len(pending)

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self._conns[conn_id].subscriptions.pop(session_id, None)

    # ---- agents -------------------------------------------------------

    def ask(
        self,
        session_id: str,
        user_id: str,
        questions: list[dict[str, Any]],
        **kw: Any,
    ) -> tuple[Request, bool]:
        """``prepare_ask`` and ``apply`` in one step (for front ends with no store)."""
        req, change = self.prepare_ask(session_id, user_id, questions, **kw)
        if change is not None:
            self.apply(change)
        return req, change is not None

    def prepare_ask(
        self,
        session_id: str,
        user_id: str,
        questions: list[dict[str, Any]],
        *,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        require_online: bool = False,
        parent_session_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[Request, Asked | None]:
        """Check an ask of ``questions`` (already valid, see ``models.AskBody``)
        and build its request, changing nothing. Applying the ``Asked`` pushes
        it to every connection of the user (seed D5).

        A repeated ``idempotency_key`` in the same session returns the first
        request and no change."""
        if ALL_SESSIONS in (session_id, parent_session_id):
            raise InvalidRequest(f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        session = self._sessions.get(session_id)
        if session is not None and session.owner != user_id:
            raise SessionOwnerMismatch(f"session {session_id} belongs to another user")
        if idempotency_key is not None and session is not None and session.by_key:
            prior = session.by_key.get(idempotency_key)
            if prior is not None:
                return prior, None
        if parent_session_id is not None:
            self._check_parent(session_id, session, parent_session_id, user_id)
        if require_online and user_id not in self._user_conns:
            raise UserOffline(f"user {user_id} has no open connection")
        if session is not None and session.pending >= self.limits.max_pending_per_session:
            raise TooManyPending(
                f"session {session_id} already has {session.pending} pending questions "
                f"(limit {self.limits.max_pending_per_session})"
            )
        if self._pending_total >= self.limits.max_pending_total:
            raise TooManyPending(f"askd holds {self._pending_total} pending questions (limit)")
        timeout = self.limits.question_timeout if timeout is None else timeout
        if not 0 < timeout <= self.limits.max_timeout:
            raise InvalidRequest(f"timeoutSeconds must be in (0, {self.limits.max_timeout:g}]")

        if session is not None:
            # The session's own id and owner strings (equal, as checked above),
            # not one more copy of each per question, as ``restore`` does.
            session_id, user_id = session.id, session.owner
        now = self._clock()
        req = Request(self._new_id(), session_id, user_id, now, now + timeout, idempotency_key=idempotency_key)
        # Only the encoded frame is kept: pushes wrap it (Request.ask_event).
        req.frame = ev.encode(
            {
                "type": ev.ASK,
                "sessionId": session_id,
                "payload": {
                    "requestId": req.request_id,
                    "questions": questions,
                    "metadata": metadata if metadata is not None else {},
                    "createdAt": isotime(req.created_at),
                    "expiresAt": isotime(req.expires_at),
                },
            }
        )
        held, limit = self._user_bytes.get(user_id, 0), self.limits.max_pending_bytes_per_user
        if held + len(req.frame) > limit:
            raise TooManyPending(f"user {user_id} already has {held} bytes of pending questions (limit {limit})")
        parent = session.parent if session is not None and session.parent is not None else parent_session_id
        return req, Asked(req, parent, session_known=session is not None and session.parent == parent)

    def _register(self, req: Request, parent_session_id: str | None) -> None:
        """Put a request (pending or ended) in its session, linking the
        session to its parent, and schedule its next deadline."""
        session = self._session(req.session_id, req.user_id, parent_session_id)
        session.requests[req.request_id] = req
        if req.idempotency_key is not None:
            if session.by_key is None:
                session.by_key = {}
            session.by_key[req.idempotency_key] = req
        if req.pending:
            session.pending += 1
            self._pending_total += 1
            self._user_bytes[req.user_id] = self._user_bytes.get(req.user_id, 0) + len(req.frame or b"")
            self._schedule(req.expires_at, _DEADLINE, req)
            self._schedule_notify(req)
        else:
            assert req.ended_at is not None
            self._schedule(req.ended_at + self.limits.result_ttl, _FORGET, req)

    def _session(self, session_id: str, owner: str, parent_session_id: str | None) -> Session:
        """The session, made if new, linked to its parent if it had none."""
        session = self._sessions.get(session_id) or self._new_session(session_id, owner)
        if parent_session_id is not None and session.parent is None:
            parent = self._sessions.get(parent_session_id) or self._new_session(parent_session_id, owner)
            session.parent = parent.id
            if parent.children is None:
                parent.children = set()
            parent.children.add(session.id)
        return session

    # ---- a store's restore (at start) ----------------------------------

    def restore_session(self, session_id: str, owner: str, parent_session_id: str | None) -> None:
        """Load a session kept by a store, with its link to its parent (any
        order: a parent named before it is loaded is made then)."""
        self._session(session_id, owner, parent_session_id)

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
        c = self.counters
        c.asked += 1
        if req.status is Status.ANSWERED:
            c.answered += 1
        elif req.status is Status.TIMEOUT:
            c.timeout += 1
        elif req.status is Status.CANCELLED:
            c.cancelled += 1

    def _check_parent(self, session_id: str, session: Session | None, parent_id: str, user_id: str) -> None:
        if parent_id == session_id:
            raise InvalidRequest("a session cannot be its own parent")
        if session is not None and session.parent not in (None, parent_id):
            raise InvalidRequest(f"session {session_id} already has parent session {session.parent}")
        parent = self._sessions.get(parent_id)
        if parent is None:
            return
        if parent.owner != user_id:
            raise SessionOwnerMismatch(f"parent session {parent_id} belongs to another user")
        # Refuse a cycle: the new parent must not descend from this session.
        node: Session | None = parent
        while node is not None:
            if node.id == session_id:
                raise InvalidRequest(f"session {parent_id} descends from {session_id}: a cycle")
            node = self._sessions.get(node.parent) if node.parent else None

    def _new_session(self, session_id: str, owner: str) -> Session:
        session = Session(session_id, owner)
        self._sessions[session_id] = session
        owned = self._user_sessions.get(owner)
        if owned is None:
            owned = self._user_sessions[owner] = SmallMap()
        owned[session_id] = None
        return session

    def answer(self, session_id: str, request_id: str, answers: Answers, *, user_id: str | None = None) -> Request:
        """``prepare_answer`` and ``apply`` in one step."""
        change = self.prepare_answer(session_id, request_id, answers, user_id=user_id)
        self.apply(change)
        return self._sessions[session_id].requests[request_id]

    def prepare_answer(
        self,
        session_id: str,
        request_id: str,
        answers: Answers,
        *,
        user_id: str | None = None,
    ) -> Ended:
        """Check an answer to a pending question; ``user_id`` None answers as
        an admin. Raises :class:`NotPending` when it is not pending for this
        user (ended, unknown, or another user's) and :class:`InvalidAnswer`
        when the answers do not fit its questions."""
        session = self._sessions.get(session_id)
        req = session.requests.get(request_id) if session else None
        if req is None or not req.pending or (user_id is not None and req.user_id != user_id):
            raise NotPending(f"question {request_id} is not pending")
        questions = req.questions
        problem = check_answers(answers, {q["question"]: bool(q.get("multiSelect", False)) for q in questions})
        if problem:
            raise InvalidAnswer(problem)
        return self._ending(req, Trigger.ANSWER, answers=answers)

    def withdraw(self, session_id: str, request_id: str) -> Request | None:
        """``prepare_withdraw`` and ``apply`` in one step."""
        req, change = self.prepare_withdraw(session_id, request_id)
        if change is not None:
            self.apply(change)
        return req

    def prepare_withdraw(self, session_id: str, request_id: str) -> tuple[Request | None, Ended | None]:
        """The agent takes one question back: a pending one ends
        ``cancelled``; an ended one stays as it is. None when unknown."""
        req = self.get(session_id, request_id)
        if req is None or not req.pending:
            return req, None
        return req, self._ending(req, Trigger.CANCEL, error=WITHDRAW_ERROR)

    def cancel_session(self, session_id: str) -> int:
        """``prepare_cancel`` and ``apply`` in one step; returns how many ended."""
        return sum(self.apply(c) for c in self.prepare_cancel(session_id))

    def prepare_cancel(self, session_id: str) -> list[Ended]:
        """End every pending question of the session and of its descendants
        as ``cancelled`` (seed ``failAllForSession``)."""
        root = self._sessions.get(session_id)
        if root is None:
            return []
        return [
            self._ending(req, Trigger.CANCEL, error=CANCEL_ERROR)
            for session in self._descendants(root)
            for req in session.requests.values()
            if req.pending
        ]

    def _ending(self, req: Request, trigger: Trigger, *, answers: Answers | None = None, error: str | None = None) -> Ended:
        next_status(req.status, trigger)  # raises on a move the lifecycle forbids
        return Ended(req.session_id, req.request_id, trigger, answers, error, self._clock())

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
            req = change.request
            if self.get(req.session_id, req.request_id) is not None:
                return False
            self._register(req, change.parent_session_id)
            self.counters.asked += 1
            self._send_to_user(req.user_id, req.ask_event())
        elif isinstance(change, Notified):
            return self.mark_notified(change.session_id, change.request_id)
        else:
            req = self.get(change.session_id, change.request_id)
            if req is None or req.pending:
                return False
            self._forget(req)
        return True

    def _end(self, req: Request, change: Ended) -> None:
        req.status = next_status(req.status, change.trigger)
        req.answers = change.answers
        req.error = change.error
        req.ended_at = change.ended_at
        left = self._user_bytes.get(req.user_id, 0) - len(req.frame or b"")
        if left > 0:
            self._user_bytes[req.user_id] = left
        else:
            self._user_bytes.pop(req.user_id, None)
        req.frame = None
        session = self._sessions[req.session_id]
        session.pending -= 1
        self._pending_total -= 1
        if req.request_id in self._unscheduled:
            self._unscheduled.discard(req.request_id)
        else:
            self._stale += 1  # its deadline entry stays in the heap until popped
        if req.status is Status.ANSWERED:
            self.counters.answered += 1
        elif req.status is Status.TIMEOUT:
            self.counters.timeout += 1
        else:
            self.counters.cancelled += 1
        self._schedule(req.ended_at + self.limits.result_ttl, _FORGET, req)
        self._send_to_user(
            req.user_id,
            Event(ev.CANCELLED, req.session_id, {"requestId": req.request_id, "reason": END_REASON[req.status]}),
        )
        self._ended.append(req)

    def _forget(self, req: Request) -> None:
        """Drop an ended request once its result retention has run out."""
        session = self._sessions[req.session_id]
        del session.requests[req.request_id]
        if req.idempotency_key is not None and session.by_key and session.by_key.get(req.idempotency_key) is req:
            del session.by_key[req.idempotency_key]
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

    # ---- webhook notifications ----------------------------------------

    def _schedule_notify(self, req: Request) -> None:
        """Put a question's notification in the heap (due at once when
        ``after`` is 0). A store that reloads pending questions after a
        restart calls this for each one not ``notified``; a due time that
        passed while askd was down fires at the next ``advance()``."""
        policy = self.notify_policy
        if policy is None or req.notified:
            return
        if policy.after <= 0:
            self._notify_due(req)
        else:
            self._schedule(req.created_at + policy.after, _NOTIFY, req)

    def _notify_due(self, req: Request) -> None:
        policy = self.notify_policy
        if policy is None or not req.pending or req.notified:
            return
        if policy.only_offline and req.user_id in self._user_conns:
            return  # seen online at the due moment: no webhook (spec E)
        self._notify.append(req)

    def mark_notified(self, session_id: str, request_id: str) -> bool:
        """A webhook delivery for this request succeeded: it is never
        reported again. False when the request is no longer known."""
        req = self.get(session_id, request_id)
        if req is None:
            return False
        req.notified = True
        return True

    # ---- time ---------------------------------------------------------

    def _schedule(self, when: float, kind: int, req: Request) -> None:
        heapq.heappush(self._heap, (when, next(self._seq), kind, req))

    def next_deadline(self) -> float | None:
        """When ``advance()`` next has work to do, in the clock's seconds."""
        heap = self._heap
        while heap and heap[0][2] != _FORGET and not heap[0][3].pending:
            if heapq.heappop(heap)[2] == _DEADLINE:
                self._stale -= 1
        # Most deadline entries stale: rebuild (as asyncio does for cancelled timers).
        if self._stale > _COMPACT_MIN and self._stale > self._pending_total:
            heap = self._heap = [e for e in heap if e[2] == _FORGET or e[3].pending]
            heapq.heapify(heap)
            self._stale = 0
        return heap[0][0] if heap else None

    def due(self) -> list[Change]:
        """What the clock has made due by now, changing nothing: questions
        past ``expiresAt`` end as ``timeout``, results past their retention
        are forgotten. The entries leave the heap: the front end applies the
        changes (or, if its store failed, keeps them to try again)."""
        now = self._clock()
        heap = self._heap
        out: list[Change] = []
        while heap and heap[0][0] <= now:
            _, _, kind, req = heapq.heappop(heap)
            if kind == _FORGET:
                # Not if already forgotten (a shared store's other node did).
                if not req.pending and self.get(req.session_id, req.request_id) is req:
                    out.append(Forgot(req.session_id, req.request_id))
            elif kind == _NOTIFY:
                self._notify_due(req)  # not a change: a report for the front end
            elif req.pending:
                self._unscheduled.add(req.request_id)
                out.append(Ended(req.session_id, req.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, now))
            else:
                self._stale -= 1
        return out

    def advance(self) -> None:
        """``due`` and ``apply`` until nothing is due (an end can make its own
        retention due at once)."""
        while changes := self.due():
            for change in changes:
                self.apply(change)

    # ---- queries ------------------------------------------------------

    def get(self, session_id: str, request_id: str) -> Request | None:
        """A pending request, or an ended one whose result is still kept."""
        session = self._sessions.get(session_id)
        return session.requests.get(request_id) if session else None

    def owner(self, session_id: str) -> str | None:
        session = self._sessions.get(session_id)
        return session.owner if session else None

    def pending(self, session_id: str | None = None, user_id: str | None = None) -> list[Request]:
        """Pending requests, oldest first within each session."""
        if session_id is not None:
            sessions: Iterable[Session] = [s for s in (self._sessions.get(session_id),) if s]
        elif user_id is not None:
            sessions = [self._sessions[s] for s in self._user_sessions.get(user_id, ())]
        else:
            sessions = self._sessions.values()
        return [
            r
            for s in sessions
            if s.pending and (user_id is None or s.owner == user_id)
            for r in s.requests.values()
            if r.pending
        ]

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
        owner = self.owner(session_id)
        return [
            c
            for c in self._conns.values()
            if session_id in c.subscriptions or (c.user_id == owner and ALL_SESSIONS in c.subscriptions)
        ]

    def stats(self) -> dict[str, int]:
        c = self.counters
        return {
            "connections": len(self._conns),
            "users": len(self._user_conns),
            "sessions": len(self._sessions),
            "pending": self._pending_total,
            "asked": c.asked,
            "answered": c.answered,
            "timedOut": c.timeout,
            "cancelled": c.cancelled,
            "repushed": c.repushed,
        }
