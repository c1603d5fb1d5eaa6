"""The core's records: what the registry holds and hands out.

Plain data with no behaviour beyond describing itself: a question
(:class:`Request`), a session, a connection, the counters, the outbox a
front end drains, the limits and the webhook policy, and the typed input of
an ask (:class:`AskInput`). The engine that changes them is
:mod:`askd.core.registry`; the changes it decides are :mod:`askd.core.changes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from askd.protocol import codec
from askd.core import events as ev
from askd.core.approvals import Approval
from askd.core.events import Event, Send, isotime
from askd.core.lifecycle import END_REASON, Status
from askd.protocol.ids import ALL_SESSIONS as ALL_SESSIONS  # re-exported: askd.core.ALL_SESSIONS
from askd.protocol.models import Answers
from askd.core.smallmap import SmallMap

if TYPE_CHECKING:
    # The wire's one definition of each shape a record builds: mypy holds
    # every key and value built below to it, and nothing is imported or
    # checked when askd runs (the dicts stay plain dicts).
    from askd.protocol.events import CancelledPayload
    from askd.protocol.results import PendingQuestion, QuestionResult
    from askd.protocol.status import Via

# The statuses read on every ask and answer, bound once: a member read off
# its enum class goes through the enum's metaclass, some 15 times dearer
# than a module global (docs/performance.md).
_PENDING, _ANSWERED, _TIMEOUT, _DECLINED = Status.PENDING, Status.ANSWERED, Status.TIMEOUT, Status.DECLINED
_ANSWERED_OR_DECLINED = (_ANSWERED, _DECLINED)


#: A ``to`` entry naming a group: ``group:G``.
GROUP_PREFIX = "group:"
# Starts the key of an audience other than one user. Ids hold no control
# character, so no user id can be mistaken for a team's key.
_TEAM = "\x1f"

#: An escalation step: seconds after ``createdAt``, and the entries it adds.
Step = tuple[float, tuple[str, ...]]


def _seconds(value: float) -> float | int:
    """A number of seconds for the wire: 600, not 600.0."""
    return int(value) if float(value).is_integer() else value


def audience_key(entries: Iterable[str]) -> str:
    """The one string naming an audience, compared as a set (order and
    repeats ignored): a lone user's id (as a v1 session's owner is), else
    the sorted entries behind a mark no id holds. Sessions and questions
    keep it as their owner, so every store keeps audiences unchanged."""
    unique = sorted(set(entries))
    if len(unique) == 1 and not unique[0].startswith(GROUP_PREFIX):
        return unique[0]
    return _TEAM + _TEAM.join(unique)


def audience_entries(key: str) -> tuple[str, ...]:
    """The entries an ``audience_key`` names, sorted."""
    return tuple(key[1:].split(_TEAM)) if key.startswith(_TEAM) else (key,)


def is_team(key: str) -> bool:
    """Whether the key names more than one user, or a group."""
    return key.startswith(_TEAM)


@dataclass(slots=True)
class AskInput:
    """One ask as the core takes it: already valid against the wire model
    (``models.AskBody``); the core checks what needs its state (owner,
    limits, the timeout against ``Limits.max_timeout``, the parent).
    Never modified (``dataclasses.replace`` makes another), but not
    ``frozen``, which made building one, for every ask, six times dearer."""

    session_id: str
    user_id: str
    questions: list[dict[str, Any]] | None  # stored and re-pushed exactly as sent (None: an action)
    metadata: dict[str, Any] | None = None
    timeout: float | None = None  # None: ``Limits.question_timeout``
    require_online: bool = False
    parent_session_id: str | None = None
    idempotency_key: str | None = None
    # The asking agent token's ``sub``: None (a token without one) reaches
    # every session; with one, only the sessions that sub first asked in.
    agent: str | None = None
    max_extension: float = 0.0  # the total time the person may add (maxExtensionSeconds)
    on_timeout: Answers | None = None  # the answers a timeout ends with (onTimeout.answers)
    to: tuple[str, ...] | None = None  # whom to ask instead of ``user_id`` (users and ``group:G``)
    escalate: tuple[Step, ...] = ()  # escalation steps (afterSeconds, entries), in time order
    action: dict[str, Any] | None = None  # an action to approve instead of questions (section 17), as sent
    quorum: int = 1
    remind: tuple[float, int] | None = None  # (everySeconds, times): askd.core.reminders; None: none
    via: str = "agent"  # through what the agent asked: ``mcp`` through ``askd mcp`` (the audit trail)
    host_key_hash: str | None = None  # SHA-256 (hex) of its hostKey: its own host may relay (protocol section 5)


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
    # Per agent token ``sub`` (tokens without one are one agent) and in all:
    # no agent fills askd, or a user's budget, alone (``budgets.py``).
    max_pending_per_agent: int = 10_000
    max_pending_bytes_per_agent: int = 64 * 1024 * 1024
    max_user_share_per_agent: float = 0.5  # of max_pending_bytes_per_user
    max_pending_bytes_total: int = 512 * 1024 * 1024


@dataclass(slots=True, frozen=True)
class NotifyPolicy:
    """When a pending question is reported in ``Outbox.notify`` (for a webhook):
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
    notified: bool = False  # a webhook delivery for it succeeded (a Notified change)
    agent: str | None = None  # the asking agent token's sub: its Idempotency-Key is that agent's
    max_extension: float = 0.0  # the time the person may add, in all
    extended: float = 0.0  # the time the person added so far
    on_timeout: Answers | None = None  # the default a timeout ends with
    answered_by: str | None = None  # who answered or declined (None: an admin without a sub)
    via: Via | None = None  # ws, link, mcp or admin
    reason: str | None = None  # a decline's reason
    defaulted: bool = False  # timed out with on_timeout as its answers
    escalate: tuple[Step, ...] = ()  # escalation steps (the ask's `escalate`, protocol section 5), in time order
    escalations: int = 0  # steps taken so far (an Escalated change each)
    digest: str | None = None  # once ended: its receipt's digest (None: ended before askd kept one)
    approval: Approval | None = None  # an action's approvals (section 17); None: questions
    remind: tuple[float, int] | None = None  # (everySeconds, times): askd.core.reminders
    on_behalf_of: str | None = None  # the away user a delegate answered for
    away: bool = False  # asked of one user, now away: it goes to their delegates too (Audiences)
    host_key_hash: str | None = None  # the SHA-256 (hex) of the ask's hostKey; None: no agent may relay
    # The order the registry learned of it (asked, applied from a shared
    # store, or restored in the store's order): deadlines due at the same
    # moment fire in this order, an extended one too. Not kept by stores.
    order: int = 0

    @property
    def to(self) -> list[str]:
        """Whom it is asked of now: the ask's entries, then those of the
        escalation steps taken."""
        out = list(audience_entries(self.user_id))
        for _, entries in self.escalate[: self.escalations]:
            out.extend(e for e in entries if e not in out)
        return out

    @property
    def one_user(self) -> str | None:
        """The user, when it is asked of one user only (no group)."""
        to = self.to
        return to[0] if len(to) == 1 and not to[0].startswith(GROUP_PREFIX) else None

    @property
    def pending(self) -> bool:
        return self.status is _PENDING

    @property
    def approvals(self) -> int:
        """The approvals given so far: what an approval's guard compares (``rules.Row``)."""
        return len(self.approval.votes) if self.approval is not None else 0

    def ask_payload(self, *, exact_numbers: bool = True) -> dict[str, Any]:
        """The pending question's payload: requestId, questions (exactly as
        the agent sent them), metadata, createdAt, expiresAt. With
        ``exact_numbers=False``, for a reader of texts and flags only, an
        integer beyond 64 bits comes out as a float (``codec.loads``)."""
        if self.frame is None:
            raise ValueError(f"request {self.request_id} has ended: its questions are gone")
        payload: dict[str, Any] = codec.loads(self.frame, exact_numbers=exact_numbers)["payload"]
        return payload

    def ask_event(self) -> Event:
        """The pending question's ``ask_user_questions`` event, to push: its
        frame is the kept bytes, not encoded again, unless the question has
        fields that change while it waits (``push_fields``)."""
        if self.frame is None:
            raise ValueError(f"request {self.request_id} has ended: its questions are gone")
        frame = self.frame
        extra = self.push_fields()
        if extra:  # a team, escalation steps or an allowance
            # The kept frame is {"type","sessionId","payload":{...}} with the
            # payload last, as prepare_ask and prepare_extend encode it: its
            # fields go in before the closing "}}", the bytes a decode, update
            # and encode would make, without them (47k instructions a push).
            assert frame.endswith(b"}}"), "the payload is the kept frame's last member"
            frame = b"%s,%s}}" % (frame[:-2], ev.encode(extra)[1:-1])
        return Event.from_frame(ev.ASK, self.session_id, frame, request_id=self.request_id)

    def push_fields(self) -> dict[str, Any]:
        """What a push adds to the kept frame, as the question is now: whom it is asked of (a team,
        with escalation steps, or of one user who is away: their delegates see whose it is), the time
        allowance, an action's approvals so far. Else nothing: its page shows it as asked of "you"."""
        out: dict[str, Any] = {}
        if is_team(self.user_id) or self.escalate or self.away:
            out["to"] = self.to
        if self.escalate:
            out.update(self.escalation_fields())
        if self.max_extension:
            out.update(self.allowance_fields())
        if self.approval is not None:  # an action's approvals so far (section 17)
            out["approvals"] = self.approval.wire()
        return out

    def escalation_fields(self) -> dict[str, Any]:
        """Steps taken, and the entries they added to ``to`` (its tail)."""
        return {"escalations": self.escalations, "escalatedTo": self.to[len(audience_entries(self.user_id)) :]}

    def allowance_fields(self) -> dict[str, Any]:
        """The time the person may add in all, and what is left of it."""
        return {
            "maxExtensionSeconds": _seconds(self.max_extension),
            "extensionLeftSeconds": _seconds(max(0.0, self.max_extension - self.extended)),
        }

    @property
    def questions(self) -> list[dict[str, Any]]:
        questions: list[dict[str, Any]] = self.ask_payload()["questions"]
        return questions

    @property
    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = self.ask_payload()["metadata"]
        return metadata

    def result(self) -> QuestionResult:
        """The question's result as the agent API sends it: a plain dict of
        the shape ``askd.protocol.results.QuestionResult`` defines, key for
        key (mypy checks it here; ``tests/protocol/test_shapes.py`` parses
        what it builds)."""
        out: QuestionResult = {
            "requestId": self.request_id,
            "sessionId": self.session_id,
            "status": self.status.value,
        }
        if self.status is _PENDING:
            out["expiresAt"] = isotime(self.expires_at)
        if self.answers is not None:
            out["answers"] = self.answers
        if self.defaulted:
            out["defaulted"] = True
        if self.status in _ANSWERED_OR_DECLINED:
            out["answeredBy"] = self.answered_by
            out["via"] = self.via
            if self.on_behalf_of is not None:
                out["onBehalfOf"] = self.on_behalf_of
        if self.reason is not None:
            out["reason"] = self.reason
        if self.error is not None:
            out["error"] = self.error
        if self.escalate:
            out["escalations"] = self.escalations
        approval = self.approval
        if approval is not None:  # an action's approvals, and once it ended what came of it (protocol section 17)
            out["approvals"] = approval.wire()
            if self.status is not _PENDING:
                out["approved"] = self.status is _ANSWERED
                out["arguments"] = approval.arguments
                out["edited"] = approval.edited
                out["scope"] = approval.scope
        return out

    def end_payload(self) -> CancelledPayload:
        """The ``ask_user_questions_cancelled`` payload of the ended question
        (``askd.protocol.events.CancelledPayload``, key for key)."""
        out: CancelledPayload = {"requestId": self.request_id, "reason": END_REASON[self.status]}
        if self.status in _ANSWERED_OR_DECLINED:
            out["answeredBy"] = self.answered_by
            out["via"] = self.via
            if self.on_behalf_of is not None:
                out["onBehalfOf"] = self.on_behalf_of
        if self.reason is not None:  # ``reason`` is the close's own: the decline's is named apart
            out["declineReason"] = self.reason
        if self.defaulted:  # the person's tabs say which default stood for them
            out["answers"] = self.answers
            out["defaulted"] = True
        return out

    def describe(self) -> PendingQuestion:
        """The pending question as listings show it
        (``askd.protocol.results.PendingQuestion``, key for key, in its order)."""
        payload = self.ask_payload()
        user = self.one_user
        # Built key by key in the wire's order; mypy holds each key to the shape.
        out = cast("PendingQuestion", {"sessionId": self.session_id})
        if user is not None:
            out["userId"] = user
        out["to"] = self.to
        if self.escalate:
            out["escalations"] = self.escalations
        out["requestId"] = self.request_id
        if self.approval is not None:
            out["action"] = payload["action"]
            out["quorum"] = payload["quorum"]
            out["approvals"] = self.approval.wire()
        else:
            out["questions"] = payload["questions"]
        out["metadata"] = payload["metadata"]
        out["createdAt"] = payload["createdAt"]
        out["expiresAt"] = payload["expiresAt"]
        return out


@dataclass(slots=True, eq=False)
class Session:
    id: str
    owner: str
    parent: str | None = None
    # The sub of the agent token that first asked in it (None: a token
    # without one): an agent token with another sub never reaches it.
    agent: str | None = None
    # Pending and retained, oldest first. Most sessions hold one: a SmallMap.
    requests: SmallMap[str, Request] = field(default_factory=SmallMap)
    pending: int = 0
    # Made on first use: most sessions have neither, and empty ones cost 280 B.
    children: set[str] | None = None
    by_key: dict[tuple[str | None, str], Request] | None = None  # (agent, Idempotency-Key) -> request


@dataclass(slots=True, eq=False)
class Connection:
    id: str
    user_id: str
    connected_at: float
    remote: str = ""
    # A set (values None): most connections subscribe to one thing, and an empty set costs 216 B.
    subscriptions: SmallMap[str, None] = field(default_factory=SmallMap)

    def describe(self) -> dict[str, Any]:
        return {
            "connectionId": self.id,
            "userId": self.user_id,
            "subscriptions": sorted(self.subscriptions),
            "connectedAt": isotime(self.connected_at),
            "remote": self.remote,
        }

    @classmethod
    def from_description(cls, desc: dict[str, Any]) -> Connection:
        """A connection as ``describe`` listed it (another node's, on a
        shared store), so one selector rule serves listed and local ones."""
        conn = cls(desc["connectionId"], desc["userId"], 0.0, desc.get("remote", ""))
        for sub in desc.get("subscriptions", ()):
            conn.subscriptions[sub] = None
        return conn


@dataclass(slots=True)
class Counters:
    asked: int = 0
    answered: int = 0
    timeout: int = 0
    cancelled: int = 0
    declined: int = 0
    repushed: int = 0

    def count(self, status: Status) -> None:
        """A request came in (asked, or restored as the store kept it)."""
        self.asked += 1
        if status is not _PENDING:
            self.ended(status)

    def ended(self, status: Status) -> None:
        if status is _ANSWERED:
            self.answered += 1
        elif status is _TIMEOUT:
            self.timeout += 1
        elif status is _DECLINED:
            self.declined += 1
        else:
            self.cancelled += 1


@dataclass(slots=True)
class Outbox:
    sends: list[Send]
    ended: list[Request]
    notify: list[Request] = field(default_factory=list)  # pending, due for a webhook
