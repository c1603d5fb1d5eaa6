"""Decisions: what an agent's, a person's or an admin's event would change.
Every decision is here, read as the state machine's moves: an ask, an
answer, a decline, an approval (a vote), an extension, a withdrawal, a
cancel, and the admin's groups and aways. (The clock's are the deadline
kinds', ``deadlines.py``; whether a decided change still takes effect
when stored is ``rules.py``.)

Each ``prepare_*`` checks everything that can be refused (who may act,
answers against the questions, the time allowance, the lifecycle) and
returns the change as data, changing nothing: the front end has its store
take it, then applies it (``rules.py`` says whether it still takes effect).
It owns no state: the methods are the registry's own (``Registry``
inherits them), reading its session book, audiences and reservations. An
ask is the one decision that holds something before it is stored: it
reserves what it takes (``Reservations.reserve``) until it is applied or
released.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from askd.core import events as ev
from askd.core.approvals import Approval, Vote
from askd.core.registry.audiences import Audiences
from askd.core.registry.budgets import check_bytes, check_count
from askd.core.changes import Approved, Asked, AwayEnded, AwaySet, Ended, Extended, GroupDeleted, GroupSet
from askd.core.digests import approval_digest, ended_digest, same_content
from askd.core.errors import (
    AlreadyVoted,
    AskInFlight,
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    NoSeat,
    NotAllowed,
    NotFound,
    NotPending,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.events import isotime
from askd.core.lifecycle import CANCEL_ERROR, WITHDRAW_ERROR, Trigger, next_status
from askd.core.records import ALL_SESSIONS, GROUP_PREFIX, AskInput, Limits, Request, Session, audience_key, is_team
from askd.core.registry.reservations import Reservations
from askd.core.registry.sessions import SessionBook
from askd.protocol import codec
from askd.protocol.action import arguments_problem
from askd.protocol.models import Answers, check_answers

if TYPE_CHECKING:
    from askd.protocol.action import Scope
    from askd.protocol.status import Via


_ANSWER = Trigger.ANSWER  # read once: see records._PENDING


def invalid(loc: str, msg: str) -> InvalidRequest:
    """An ask's field at fault, named in ``details`` as pydantic's errors are."""
    return InvalidRequest(f"{loc}: {msg}", [{"loc": loc, "msg": msg}])


@dataclass(frozen=True, slots=True)
class Relay:
    """An agent token passing on what a person answered in the agent's own
    host (protocol section 5, "Answering for the person"): the token's
    ``sub`` and the SHA-256 of the ``hostKey`` it sent (None: none)."""

    agent: str | None
    host_key_hash: str | None


def check_relay(req: Request, relay: Relay, by: str | None) -> None:
    """Raise :class:`Forbidden` unless the ask let its own host relay: it
    carried a ``hostKey``, the relay carries the same and comes from a token
    with the asking token's ``sub`` (both without one count as the same: the
    key is what tells one process from another), and on an approval the host
    relays for one person only, whoever it relayed for first (a host is one
    person's window: with a quorum it fills at most one seat)."""
    rid = req.request_id
    if req.host_key_hash is None:
        raise Forbidden(f"question {rid} was asked without hostKey: no agent token may answer it for a person")
    if relay.agent != req.agent:
        raise Forbidden(f"question {rid} was asked by another agent: only the asking agent's own host may answer it for a person")
    if relay.host_key_hash is None or not hmac.compare_digest(relay.host_key_hash, req.host_key_hash):
        raise Forbidden(
            f"hostKey is not the one question {rid} was asked with: only the asking process's own host may answer it for a person"
        )
    if req.approval is not None:
        relayed = next((v.by for v in req.approval.votes if v.via == "mcp" and v.by != by), None)
        if relayed is not None:
            raise Forbidden(f"the host relayed for {relayed} on question {rid} already: a host answers for one person")


class Decisions:
    """The registry's decisions, written here and mixed into
    :class:`~askd.core.registry.Registry` (``class Registry(Decisions)``):
    a caller's ``registry.prepare_answer(...)`` runs this code with no
    forwarding call between. They read the registry's session book,
    audiences, reservations (which sessions an agent reaches), limits and
    clock, declared below; they own no state of their own."""

    _book: SessionBook
    audiences: Audiences
    _reservations: Reservations
    limits: Limits
    _clock: Callable[[], float]
    _new_id: Callable[[], str]  # a new request's id
    _online: Callable[[str], bool]  # whether a user has a connection open here

    # ---- asking ---------------------------------------------------------

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
        limits = self.limits
        if ALL_SESSIONS in (session_id, parent_session_id):
            where = "sessionId" if session_id == ALL_SESSIONS else "parentSessionId"
            raise invalid(where, f"{ALL_SESSIONS!r} is subscribe's wildcard, never a session id")
        if agent is not None:  # before the owner: another agent's session tells nothing
            self._reservations.reach(session_id, agent)
        session = self._book.sessions.get(session_id)
        flying = self._reservations.in_session.get(session_id, ())
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
            self._reservations.reach(parent_session_id, agent)
            self._check_parent(session_id, session, parent_session_id, user_id)
        self.audiences.check_entries(ask)
        if ask.require_online and not any(self._online(u) for u in self.audiences.resolve(ask.to or (user_id,))):
            raise UserOffline(f"no user of {', '.join(ask.to or (user_id,))} has an open connection")
        in_session = (session.pending if session is not None else 0) + len(flying)
        if in_session >= limits.max_pending_per_session:
            raise TooManyPending(
                f"session {session_id} already has {in_session} pending questions "
                f"(limit {limits.max_pending_per_session})"
            )
        check_count(limits, self._book.held, agent)
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
        shape: dict[str, Any]
        if ask.action is not None:  # an approval (protocol section 17): what it runs, its quorum
            # (the approvals so far are added at each push: Request.push_fields)
            req.approval = Approval(ask.quorum, ask.action["arguments"])
            shape = {"action": ask.action, "quorum": ask.quorum}
        else:
            shape = {"questions": ask.questions}
        # Only the encoded frame is kept: pushes wrap it (Request.ask_event).
        req.frame = ev.encode(
            {
                "type": ev.ASK,
                "sessionId": session_id,
                "payload": {
                    "requestId": req.request_id,
                    **shape,
                    "metadata": ask.metadata if ask.metadata is not None else {},
                    "createdAt": isotime(req.created_at),
                    "expiresAt": isotime(req.expires_at),
                },
            }
        )
        check_bytes(limits, self._book.held, user_id, agent, len(req.frame))
        parent = session.parent if session is not None and session.parent is not None else parent_session_id
        self._reservations.reserve(req)
        asked = Asked(req, parent, session_known=session is not None and session.parent == parent, via=ask.via)
        # Whom a team's ask reaches, as the groups are now (the audit trail,
        # which sorts them). A one-user ask's is its user: nothing to do.
        if ask.to and is_team(user_id):
            asked.audience = self.audiences.resolve(ask.to)
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

    # ---- answering, declining, approving: a pending question's end ------

    def prepare_answer(
        self,
        session_id: str,
        request_id: str,
        answers: Answers,
        *,
        user_id: str | None = None,
        via: Via = "ws",
        answered_by: str | None = None,
        relay: Relay | None = None,
    ) -> Ended:
        """Check an answer to a pending question; ``user_id`` None answers as
        an admin. Raises :class:`NotPending` when it is not pending for this
        user (ended, unknown, or another user's), :class:`Forbidden` for a
        ``relay`` the ask does not allow (:func:`check_relay`) and
        :class:`InvalidAnswer` when the answers do not fit its questions. The
        result names ``answered_by`` (default: ``user_id``) and ``via``."""
        req = self._pending_for(session_id, request_id, user_id, relay)
        if req.approval is not None:
            raise InvalidRequest(f"question {request_id} is an action to approve: send approve or decline, not an answer")
        # The check reads the questions' texts and multiSelect flags, no number.
        questions = req.ask_payload(exact_numbers=False)["questions"]
        problem = check_answers(answers, {q["question"]: bool(q.get("multiSelect", False)) for q in questions})
        if problem:
            raise InvalidAnswer(problem)
        by = user_id if answered_by is None else answered_by
        ended = self._ending(req, _ANSWER, answers=answers, answered_by=by, via=via)
        if self.audiences.aways:  # a delegate answers for an away user
            ended.on_behalf_of = self.audiences.on_behalf(user_id, req)
        return ended

    def _pending_for(self, session_id: str, request_id: str, user_id: str | None, relay: Relay | None = None) -> Request:
        """The pending question ``user_id`` (None: an admin) may act on,
        through ``relay`` when an agent passes it on (:func:`check_relay`)."""
        req = self._book.get(session_id, request_id)
        if req is None or not req.pending or (user_id is not None and not self.audiences.holds(user_id, req)):
            raise NotPending(f"question {request_id} is not pending")
        if relay is not None:
            check_relay(req, relay, user_id)
        return req

    def prepare_decline(
        self,
        session_id: str,
        request_id: str,
        reason: str | None = None,
        *,
        user_id: str | None = None,
        via: Via = "ws",
        answered_by: str | None = None,
        relay: Relay | None = None,
    ) -> Ended:
        """The person refuses to answer: the question ends ``declined``.
        Raises :class:`NotPending` and :class:`Forbidden` as ``prepare_answer`` does."""
        req = self._pending_for(session_id, request_id, user_id, relay)
        by = user_id if answered_by is None else answered_by
        ended = self._ending(req, Trigger.DECLINE, answered_by=by, via=via, reason=reason)
        ended.on_behalf_of = self.audiences.on_behalf(user_id, req)
        return ended

    def prepare_approve(
        self,
        session_id: str,
        request_id: str,
        arguments: dict[str, Any] | None = None,
        scope: Scope | None = None,
        *,
        user_id: str | None = None,
        via: Via = "ws",
        answered_by: str | None = None,
        relay: Relay | None = None,
    ) -> Approved | Ended:
        """One approval of a pending action (section 17) by ``user_id`` (None:
        an admin, named ``answered_by``). The one that completes its quorum
        is an ``Ended`` (answered), any other an ``Approved``; both take
        effect only against the count of approvals decided with here.
        Raises :class:`NotPending` and :class:`Forbidden` as ``prepare_answer`` does,
        :class:`AlreadyVoted` when this approver approved it already,
        :class:`NoSeat` when it names nobody (an admin without a ``sub``, a
        shared link) on a quorum above 1, and :class:`InvalidRequest` for a
        question that is no action, arguments it does not let be edited or
        that fail its schema, and ``always`` it does not offer."""
        req = self._pending_for(session_id, request_id, user_id, relay)
        approval = req.approval
        if approval is None:
            raise InvalidRequest(f"question {request_id} is not an action to approve: answer it instead")
        action = req.ask_payload()["action"]
        if arguments is not None and not action.get("editable", False):
            raise _refused("arguments", "this action's arguments are not editable")
        if scope == "always" and not action.get("allowAlways", False):
            raise _refused("scope", "this action does not offer always")
        if arguments is not None:
            problem = arguments_problem(action.get("schema"), arguments)
            if problem is not None:
                where, msg = problem
                raise _refused(f"arguments.{where}" if where else "arguments", f"the arguments fail the action's schema: {msg}")
        by = user_id if answered_by is None else answered_by
        if by is None and approval.quorum > 1:
            # A quorum counts people (protocol section 17): an approval that
            # names nobody may end a quorum of 1, never fill a seat of more.
            who = "an admin token without a sub" if via == "admin" else "a link not bound to one person"
            raise NoSeat(f"{who} cannot fill a quorum seat: question {request_id} needs {approval.quorum} people's approvals")
        if approval.voted(by):  # after what is wrong with the approve itself: that is an error whoever sends it
            raise AlreadyVoted(f"{by or 'the admin'} approved {request_id} already")
        vote = Vote(by, via, self._clock(), scope or "once")
        counted = len(approval.votes)
        if counted + 1 < approval.quorum:
            return Approved(req.session_id, req.request_id, counted, vote, approval.with_vote(vote))
        final = approval.arguments if arguments is None else arguments
        edited = arguments is not None and not same_content(arguments, approval.arguments)
        done = approval.approved(vote, final, edited)
        ended = self._ending(req, _ANSWER, answered_by=by, via=via)
        ended.counted, ended.approval, ended.digest = counted, done, approval_digest(req, final, done.scope)
        ended.on_behalf_of = self.audiences.on_behalf(user_id, req)
        return ended

    def prepare_extend(
        self, session_id: str, request_id: str, seconds: float, *, user_id: str | None = None,
        agent: str | None = None, via: str | None = None,
    ) -> Extended:
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
        max_timeout = self.limits.max_timeout
        if user_id is None and expires_at > req.created_at + max_timeout + req.max_extension:
            raise NotAllowed(
                f"question {request_id} may live at most max_timeout_seconds ({max_timeout:g}) "
                f"plus its maxExtensionSeconds ({req.max_extension:g}) from its creation"
            )
        frame = codec.loads(req.frame or b"")
        frame["payload"]["expiresAt"] = isotime(expires_at)
        by, how = (user_id, via or "ws") if user_id is not None else (agent, "agent")
        return Extended(req.session_id, req.request_id, req.expires_at, expires_at, extended, ev.encode(frame), by, how)

    def prepare_withdraw(
        self, session_id: str, request_id: str, agent: str | None = None
    ) -> tuple[Request | None, Ended | None]:
        """The agent takes one question back: a pending one ends
        ``cancelled``; an ended one stays as it is. None when unknown (to
        this agent: in another agent's session, as if unknown)."""
        req = self._book.get(session_id, request_id) if self._reservations.reaches(session_id, agent) else None
        if req is None or not req.pending:
            return req, None
        ended = self._ending(req, Trigger.CANCEL, error=WITHDRAW_ERROR)
        ended.actor, ended.actor_via = agent, "agent"
        return req, ended

    def prepare_cancel(self, session_id: str, agent: str | None = None) -> list[Ended]:
        """End every pending question of the session and of its descendants
        as ``cancelled`` (seed ``failAllForSession``). Raises
        :class:`NotFound` for another agent's session."""
        self._reservations.reach(session_id, agent)
        root = self._book.sessions.get(session_id)
        if root is None:
            return []
        ended = [
            self._ending(req, Trigger.CANCEL, error=CANCEL_ERROR)
            for session in self._book.descendants(root)
            for req in session.requests.values()
            if req.pending
        ]
        for change in ended:
            change.actor, change.actor_via = agent, "agent"
        return ended

    def _ending(
        self,
        req: Request,
        trigger: Trigger,
        *,
        answers: Answers | None = None,
        error: str | None = None,
        answered_by: str | None = None,
        via: Via | None = None,
        reason: str | None = None,
    ) -> Ended:
        next_status(req.status, trigger)  # raises on a move the lifecycle forbids
        return Ended(
            req.session_id, req.request_id, trigger, answers, error, self._clock(), answered_by, via, reason,
            digest=ended_digest(req, answers),
        )

    # ---- groups -------------------------------------------------------

    def prepare_group_set(self, group: str, members: Iterable[str]) -> GroupSet:
        """Replace a group's members (sorted, de-duplicated)."""
        return GroupSet(group, tuple(sorted(set(members))))

    def prepare_group_delete(self, group: str) -> GroupDeleted:
        """Delete a group; raises :class:`NotFound` when there is none."""
        if group not in self.audiences.groups:
            raise NotFound(f"no group {group}")
        return GroupDeleted(group)

    # ---- aways: a user away, their questions also go to delegates ----

    def prepare_away(self, user: str, until: float, delegates: Iterable[str]) -> AwaySet:
        """A user away until ``until`` (in the future), with delegates: user
        ids and ``group:G`` of groups that exist, not the user themself, at
        least one (de-duplicated, in the order given). ``InvalidRequest`` otherwise."""
        named = tuple(dict.fromkeys(delegates))
        if until <= self._clock():
            raise _refused("until", "must be in the future")
        if not named:
            raise _refused("delegates", "name at least one user or group:G")
        for i, entry in enumerate(named):
            if entry == user:
                raise _refused(f"delegates.{i}", "a user cannot be their own delegate")
            if entry.startswith(GROUP_PREFIX) and entry[len(GROUP_PREFIX) :] not in self.audiences.groups:
                raise _refused(f"delegates.{i}", f"no group {entry[len(GROUP_PREFIX):]!r}")
        return AwaySet(user, until, named)

    def prepare_back(self, user: str) -> AwayEnded:
        """End a user's away; raises :class:`NotFound` when they are not away."""
        if user not in self.audiences.aways:
            raise NotFound(f"{user} is not away")
        return AwayEnded(user)


def _refused(loc: str, msg: str) -> InvalidRequest:
    return InvalidRequest(f"{loc}: {msg}", [{"loc": loc, "msg": msg}])
