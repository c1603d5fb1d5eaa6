"""What changes in a question's life, as data: the records a store keeps.

The registry decides a change (``Registry.prepare_*`` for a front end's
events, ``Registry.due`` for the clock's) without applying it. The front end
makes the change durable in its store, then hands it to ``Registry.apply``.
So a store that fails leaves the core as it was, acknowledged means durable,
and a store shared by several daemons can decide atomically (checking the
status first) before any of them applies the change.

A change is never modified once made, but its class is not ``frozen``: a
frozen dataclass sets each field through ``object.__setattr__``, which made
building an ``Ended`` four times dearer (19k instructions against 5k), and
every question makes several changes (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from askd.core.approvals import Approval, Vote
from askd.core.lifecycle import TRANSITIONS, Status, Trigger
from askd.protocol.models import Answers
from askd.core.records import Request

if TYPE_CHECKING:
    from askd.protocol.status import Via


@dataclass(slots=True)
class Asked:
    """A new pending question (built, not yet registered)."""

    request: Request
    parent_session_id: str | None  # its session's parent once applied
    # The session was known, with this parent, before the ask: a store
    # already holds its row and need not write it again.
    session_known: bool = False
    # The users it reaches (groups resolved then) when asked of a team, for
    # the audit trail; None: its one user (the trail writes it).
    audience: AbstractSet[str] | None = field(default=None, compare=False)
    # Through what the agent asked (the audit trail): ``agent``, or ``mcp`` through ``askd mcp``.
    via: str = field(default="agent", compare=False)


@dataclass(slots=True)
class Ended:
    """A pending question ends: a store applies it only if still pending."""

    session_id: str
    request_id: str
    trigger: Trigger
    answers: Answers | None
    error: str | None
    ended_at: float
    # Who ended it and how (an answer or a decline; protocol section 4).
    answered_by: str | None = None
    via: Via | None = None
    reason: str | None = None  # a decline's reason
    defaulted: bool = False  # a timeout whose answers are the ask's onTimeout default
    # What the receipt covers (protocol section 16), hashed while the questions are
    # still held: an ended question keeps no questions, only this.
    digest: str | None = None
    # The approval completing an action's quorum (section 17): taken only
    # while the action has ``counted`` approvals, as ``Approved`` is; it
    # leaves ``approval`` (every vote, the final arguments and scope). None:
    # any other end, which leaves the approvals given as they are.
    counted: int | None = None
    approval: Approval | None = None
    # Who cancelled or withdrew it and through what (the audit trail, section
    # P): the agent's sub and ``agent``, or the admin token's sub and ``admin``.
    actor: str | None = field(default=None, compare=False)
    actor_via: str | None = field(default=None, compare=False)
    # The away user a delegate answered for: None when the one who
    # ended it is in the audience on their own (or is no delegate).
    on_behalf_of: str | None = None

    @property
    def status(self) -> Status:
        return TRANSITIONS[(Status.PENDING, self.trigger)]


@dataclass(slots=True)
class Approved:
    """One approval of a pending action that does not yet complete its
    quorum (the one that does is an ``Ended``). Takes effect only while it
    is pending with ``counted`` approvals, the count it was decided against
    (compare and set, as ``Extended``): of two approvals decided at once,
    one applies and the other is decided again, so none counts against a
    stale count and no quorum is skipped. ``approval`` is the record with
    ``vote`` added. The kept frame is not re-encoded: a push adds the
    approvals as they are then (``Request.push_fields``), so an extension
    decided at the same moment, which rewrites the frame, loses none."""

    session_id: str
    request_id: str
    counted: int
    vote: Vote
    approval: Approval


@dataclass(slots=True)
class Extended:
    """A pending question's deadline moves to ``expires_at``. Takes effect
    only while it is pending with the deadline ``previous`` (compare and
    set: of two extensions decided at once, on any node, one applies and
    the other is decided again). ``extended`` is the person's allowance used
    after it (an agent's extension leaves it as it was); ``frame`` is the
    ``ask_user_questions`` frame re-encoded with the new ``expiresAt``."""

    session_id: str
    request_id: str
    previous: float
    expires_at: float
    extended: float
    frame: bytes
    # Who asked for it and how (the audit trail, protocol section 19): the person
    # (``ws`` or ``link``), or the agent's sub (``agent``).
    by: str | None = field(default=None, compare=False)
    via: str | None = field(default=None, compare=False)


@dataclass(slots=True)
class Forgot:
    """An ended question's result retention ran out: drop it."""

    session_id: str
    request_id: str


@dataclass(slots=True)
class Notified:
    """A webhook delivery for a pending question succeeded: never again.
    Takes effect only while the question is pending, on every store."""

    session_id: str
    request_id: str


@dataclass(slots=True)
class Escalated:
    """Escalation step ``step`` (from 1) of a pending question is taken:
    its entries join the audience. Takes effect only while the question is
    pending and has taken fewer steps, on every store: once per step,
    whichever node's clock decided it first."""

    session_id: str
    request_id: str
    step: int
    # The users the step added (its groups resolved then; none already in the
    # audience), for the audit trail (protocol section 19).
    added: tuple[str, ...] = field(default=(), compare=False)


@dataclass(slots=True)
class GroupSet:
    """A group's members are replaced (the group is made if new). Always
    takes effect: the last one stored wins, on every node."""

    group: str
    members: tuple[str, ...]  # sorted, de-duplicated


@dataclass(slots=True)
class GroupDeleted:
    """A group is deleted: takes effect only if the store holds it, so of
    two nodes deleting it one answers ``404``."""

    group: str


@dataclass(slots=True)
class AwaySet:
    """A user is away until ``until`` (the clock's seconds), their questions
    also going to ``delegates`` (users and ``group:G``). Always takes effect
    (the last stored wins, on every node), as ``GroupSet``."""

    user: str
    until: float
    delegates: tuple[str, ...]


@dataclass(slots=True)
class AwayEnded:
    """A user's away ends: only while it is held, and, for the end its
    deadline decides (``until`` set), only if it still ends then (an away
    set again since is not ended by the old deadline). ``until`` None: ended
    by the admin (``DELETE``)."""

    user: str
    until: float | None = None


Change = Union[Asked, Ended, Approved, Extended, Forgot, Notified, Escalated, GroupSet, GroupDeleted, AwaySet, AwayEnded]
