"""Reservations: ask admission, and what asks being committed hold.

It owns the asks prepared and not yet applied or released (``_flying``,
``_flying_in``: by request and by session), whose budgets it counts in the
session book's tally from the moment they are prepared. ``prepare_ask``
checks every refusal of an ask here, once, against the questions applied
and the asks in flight alike, so asks decided before any of them is stored
(one batch) are checked against each other. Which sessions an agent token
reaches is read here too: a session being asked in for the first time is
its asker's already.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from askd.core import events as ev
from askd.core.approvals import Approval
from askd.core.audiences import Audiences
from askd.core.sessions import SessionBook
from askd.core.budgets import Tally, check_bytes, check_count
from askd.core.changes import Asked
from askd.core.errors import AskInFlight, InvalidRequest, NotFound, SessionOwnerMismatch, TooManyPending, UserOffline
from askd.core.events import isotime
from askd.core.records import ALL_SESSIONS, AskInput, Limits, Request, Session, audience_key, is_team


def invalid(loc: str, msg: str) -> InvalidRequest:
    """An ask's field at fault, named in ``details`` as pydantic's errors are."""
    return InvalidRequest(f"{loc}: {msg}", [{"loc": loc, "msg": msg}])


class Reservations:
    def __init__(
        self,
        book: SessionBook,
        audiences: Audiences,
        limits: Limits,
        clock: Callable[[], float],
        new_id: Callable[[], str],
        online: Callable[[str], bool],
    ) -> None:
        self.held: Tally = book.held  # what they reserve is counted with what questions hold
        # Asks prepared and not yet applied or released (being committed),
        # by request and by session: what they reserve counts for the next.
        self._flying: dict[str, Request] = {}
        self._flying_in: dict[str, list[Request]] = {}
        self._book = book
        self._audiences = audiences
        self._limits = limits
        self._clock = clock
        self._new_id = new_id
        self._online = online  # whether a user has a connection open

    @property
    def in_flight(self) -> int:
        return len(self._flying)

    def prepare_ask(self, ask: AskInput) -> tuple[Request, Asked | None]:
        """Check an ask (already valid against the wire model, see
        ``models.AskBody``) and build its request. Applying the ``Asked``
        pushes it to every connection of the user, subscribed or not (a
        person sees a new question without asking for it). Every limit is
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
        # lone user's id, as in v1, else the set of entries (users and groups).
        user_id = audience_key(ask.to) if ask.to else ask.user_id
        idempotency_key, timeout, agent = ask.idempotency_key, ask.timeout, ask.agent
        limits = self._limits
        if ALL_SESSIONS in (session_id, parent_session_id):
            where = "sessionId" if session_id == ALL_SESSIONS else "parentSessionId"
            raise invalid(where, f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        if agent is not None:  # before the owner: another agent's session tells nothing
            self.reach(session_id, agent)
        session = self._book.sessions.get(session_id)
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
        self._audiences.check_entries(ask)
        if ask.require_online and not any(self._online(u) for u in self._audiences.resolve(ask.to or (user_id,))):
            raise UserOffline(f"no user of {', '.join(ask.to or (user_id,))} has an open connection")
        in_session = (session.pending if session is not None else 0) + len(flying)
        if in_session >= limits.max_pending_per_session:
            raise TooManyPending(
                f"session {session_id} already has {in_session} pending questions "
                f"(limit {limits.max_pending_per_session})"
            )
        check_count(limits, self.held, agent)
        timeout = limits.question_timeout if timeout is None else timeout
        if not 0 < timeout <= limits.max_timeout:
            raise invalid("timeoutSeconds", f"must be > 0 and at most max_timeout_seconds ({limits.max_timeout:g})")
        if not 0 <= ask.max_extension <= limits.max_timeout:
            raise invalid("maxExtensionSeconds", f"must be >= 0 and at most max_timeout_seconds ({limits.max_timeout:g})")
        for i, (after, _) in enumerate(ask.escalate):
            msg = None
            if not 0 < after < timeout:
                msg = f"must be > 0 and below the question's timeout ({timeout:g} s)"
            elif i and after <= ask.escalate[i - 1][0]:
                msg = "must be greater than the step before's"
            if msg is not None:
                raise invalid(f"escalate.{i}.afterSeconds", msg)

        if session is not None:
            # The session's own id and owner strings (equal, as checked above),
            # not one more copy of each per question, as ``restore`` does.
            session_id, user_id = session.id, session.owner
        now = self._clock()
        req = Request(
            self._new_id(), session_id, user_id, now, now + timeout, idempotency_key=idempotency_key, agent=agent,
            escalate=ask.escalate,
        )
        req.max_extension, req.on_timeout, req.remind = ask.max_extension, ask.on_timeout, ask.remind
        req.host_key_hash = ask.host_key_hash
        asked: dict[str, Any]
        if ask.action is not None:  # an approval (section 17): what it runs, its quorum
            # (the approvals so far are added at each push: Request.push_fields)
            req.approval = Approval(ask.quorum, ask.action["arguments"])
            asked = {"action": ask.action, "quorum": ask.quorum}
        else:
            asked = {"questions": ask.questions}
        # Only the encoded frame is kept: pushes wrap it (Request.ask_event).
        req.frame = ev.encode(
            {
                "type": ev.ASK,
                "sessionId": session_id,
                "payload": {
                    "requestId": req.request_id,
                    **asked,
                    "metadata": ask.metadata if ask.metadata is not None else {},
                    "createdAt": isotime(req.created_at),
                    "expiresAt": isotime(req.expires_at),
                },
            }
        )
        check_bytes(limits, self.held, user_id, agent, len(req.frame))
        parent = session.parent if session is not None and session.parent is not None else parent_session_id
        self._flying[req.request_id] = req
        self.held.add(user_id, agent, len(req.frame))  # counted from now: applying keeps it
        self._flying_in.setdefault(session_id, []).append(req)
        asked = Asked(req, parent, session_known=session is not None and session.parent == parent, via=ask.via)
        # Whom a team's ask reaches, as the groups are now (the audit trail,
        # which sorts them). A one-user ask's is its user: nothing to do.
        if ask.to and is_team(user_id):
            asked.audience = self._audiences.resolve(ask.to)
        return req, asked

    def _check_parent(self, session_id: str, session: Session | None, parent_id: str, user_id: str) -> None:
        if parent_id == session_id:
            raise invalid("parentSessionId", "a session cannot be its own parent")
        if session is not None and session.parent not in (None, parent_id):
            raise invalid("parentSessionId", f"session {session_id} already has parent session {session.parent}")
        sessions = self._book.sessions
        parent = sessions.get(parent_id)
        if parent is None:
            return
        if parent.owner != user_id:
            raise SessionOwnerMismatch(f"parent session {parent_id} belongs to another user")
        # Refuse a cycle: the new parent must not descend from this session.
        node: Session | None = parent
        while node is not None:
            if node.id == session_id:
                raise invalid("parentSessionId", f"session {parent_id} descends from {session_id}: a cycle")
            node = sessions.get(node.parent) if node.parent else None

    def reaches(self, session_id: str, agent: str | None) -> bool:
        """Whether an agent token with this ``sub`` may act on the session:
        a token without one reaches every session; one with a sub, a session
        it first asked in, or one nobody asked in yet (nor is asking in)."""
        if agent is None:
            return True
        session = self._book.sessions.get(session_id)
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
        req = self.unreserve(change)
        if req is not None:
            self.held.take(req.user_id, req.agent, len(req.frame or b""))

    def unreserve(self, change: Asked) -> Request | None:
        """The ask is no longer in flight; returns it if it was (prepared
        here), its budgets still counted."""
        req = self._flying.pop(change.request.request_id, None)
        if req is not None:
            flying = self._flying_in[req.session_id]
            flying.remove(req)
            if not flying:
                del self._flying_in[req.session_id]
        return req
