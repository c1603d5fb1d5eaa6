"""The frames the daemon sends on ``/ws`` (protocol section 3), one
``TypedDict`` each, with their type names.

The core builds them as plain dicts of these shapes (``askd.core.events``,
``Request.end_payload``, the registry); ``askd schema`` puts them in the
wire's JSON Schema, from which the JavaScript client's types are generated;
``askd.client.UserClient`` parses them (``askd.protocol.adapter``). Newer
daemons may add fields. The envelope is ``{"type", "sessionId"?,
"payload"?, "id"?}``; ``"id"`` only in a reply to a client frame that
carried one. A key that may be absent is ``NotRequired``; its
``Field(default=None)`` is what the schema says and what a parse fills in.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, RootModel, StrictBool, StrictStr, with_config
from typing_extensions import NotRequired, TypedDict

from askd.protocol.action import Action
from askd.protocol.ids import Id
from askd.protocol.models import Answers, Question
from askd.protocol.results import ApprovalGiven, ErrorDetail

#: Each frame's ``type``.
ASK = "ask_user_questions"
CANCELLED = "ask_user_questions_cancelled"
EXTENDED = "ask_user_questions_extended"
ESCALATED = "ask_user_questions_escalated"
VOTED = "ask_user_questions_voted"
SNAPSHOT = "session_snapshot"
ACK = "ack"
ERROR = "error"
PONG = "pong"


# The ``id`` a reply echoes: absent when the client frame carried none.
_FrameIdOrNone = Annotated[StrictStr | int | None, Field(default=None)]


@with_config(ConfigDict(extra="allow"))
class AskedPayload(TypedDict):
    requestId: Id
    questions: NotRequired[
        Annotated[
            list[Question] | None,
            Field(default=None, description="As the agent sent them, unknown fields included; absent for an action."),
        ]
    ]
    action: NotRequired[Annotated[Action | None, Field(default=None, description="An action to approve (instead of questions).")]]
    quorum: NotRequired[Annotated[int | None, Field(default=None, description="Approvals it needs (action only).")]]
    approvals: NotRequired[
        Annotated[list[ApprovalGiven] | None, Field(default=None, description="Approvals given so far (action only).")]
    ]
    metadata: dict[str, Any]
    createdAt: StrictStr
    expiresAt: StrictStr
    to: NotRequired[
        Annotated[
            list[StrictStr] | None,
            Field(
                default=None,
                description="Whom it is asked of now (users and group:G), for a team question or one with escalation steps; "
                "absent: asked of this user alone.",
            ),
        ]
    ]
    escalations: NotRequired[
        Annotated[int | None, Field(default=None, description="Escalation steps taken so far (asked with escalate only).")]
    ]
    escalatedTo: NotRequired[
        Annotated[
            list[StrictStr] | None,
            Field(default=None, description="The entries the steps taken added: the tail of to (asked with escalate only)."),
        ]
    ]
    maxExtensionSeconds: NotRequired[
        Annotated[float | None, Field(default=None, description="The time the person may add in all (only when the ask allows some).")]
    ]
    extensionLeftSeconds: NotRequired[
        Annotated[float | None, Field(default=None, description="What is left of that allowance (only when the ask allows some).")]
    ]


class AskedEvent(TypedDict):
    """``ask_user_questions``: a question for this user, live or re-pushed by a subscribe."""

    type: Literal["ask_user_questions"]
    sessionId: Id
    payload: AskedPayload


@with_config(ConfigDict(extra="allow"))
class CancelledPayload(TypedDict):
    requestId: Id
    reason: Annotated[
        StrictStr,
        Field(description="How the question ended: answered, timeout, cancelled, declined, reassigned (no longer yours)."),
    ]
    answeredBy: NotRequired[
        Annotated[
            StrictStr | None,
            Field(default=None, description="Who answered or declined (answered, declined); null: an admin without a name."),
        ]
    ]
    via: NotRequired[Annotated[StrictStr | None, Field(default=None, description="How: ws, link, mcp or admin (answered, declined).")]]
    onBehalfOf: NotRequired[
        Annotated[StrictStr, Field(description="A delegate answered or declined for this away user (protocol section 20).")]
    ]
    declineReason: NotRequired[
        Annotated[StrictStr | None, Field(default=None, description="The reason given with a decline, if any.")]
    ]
    answers: NotRequired[
        Annotated[
            Answers | None,
            Field(default=None, description="For a timeout that took the ask's onTimeout default: the answers it ended with."),
        ]
    ]
    defaulted: NotRequired[Annotated[StrictBool | None, Field(default=None, description="true with those answers (timeout only).")]]


class CancelledEvent(TypedDict):
    """``ask_user_questions_cancelled``: the question ended."""

    type: Literal["ask_user_questions_cancelled"]
    sessionId: Id
    payload: CancelledPayload


@with_config(ConfigDict(extra="allow"))
class ExtendedPayload(TypedDict):
    requestId: Id
    expiresAt: StrictStr
    maxExtensionSeconds: NotRequired[Annotated[float | None, Field(default=None, description="As in ask_user_questions.")]]
    extensionLeftSeconds: NotRequired[
        Annotated[
            float | None,
            Field(default=None, description="What is left of the person's allowance now (only when the ask allows some)."),
        ]
    ]


class ExtendedEvent(TypedDict):
    """``ask_user_questions_extended``: the question's deadline moved."""

    type: Literal["ask_user_questions_extended"]
    sessionId: Id
    payload: ExtendedPayload


@with_config(ConfigDict(extra="allow"))
class EscalatedPayload(TypedDict):
    requestId: Id
    to: Annotated[list[StrictStr], Field(description="Whom it is asked of now, as in ask_user_questions.")]
    escalations: Annotated[int, Field(description="Escalation steps taken so far.")]
    escalatedTo: Annotated[list[StrictStr], Field(description="The entries the steps taken added: the tail of to.")]


class EscalatedEvent(TypedDict):
    """``ask_user_questions_escalated``: an escalation step widened the
    audience of a question this user already has (new members get
    ``ask_user_questions`` instead)."""

    type: Literal["ask_user_questions_escalated"]
    sessionId: Id
    payload: EscalatedPayload


class VotedPayload(TypedDict):
    requestId: Id
    approvals: Annotated[list[ApprovalGiven], Field(description="The approvals given so far, in order.")]
    needed: Annotated[int, Field(description="The approvals it needs (its quorum).")]


class VotedEvent(TypedDict):
    """``ask_user_questions_voted``: an action got an approval and needs more."""

    type: Literal["ask_user_questions_voted"]
    sessionId: Id
    payload: VotedPayload


class SnapshotPayload(TypedDict):
    active: StrictBool
    pending: int


class SnapshotEvent(TypedDict):
    """``session_snapshot``: sent on subscribe, before the re-pushed questions."""

    type: Literal["session_snapshot"]
    sessionId: Id
    payload: SnapshotPayload
    id: NotRequired[_FrameIdOrNone]


@with_config(ConfigDict(extra="allow"))
class AckPayload(TypedDict):
    """One of ``{"accepted", "reason"?}`` (answer, decline), ``{"accepted",
    "approvals", "needed"}`` or ``{"accepted": false, "reason"}`` (approve), ``{"repushed",
    "sessionId"}`` (subscribe), ``{"extended", "expiresAt"?, "reason"?}``
    (extend), ``{}`` (unsubscribe)."""

    accepted: NotRequired[Annotated[StrictBool | None, Field(default=None)]]
    extended: NotRequired[Annotated[StrictBool | None, Field(default=None)]]
    reason: NotRequired[
        Annotated[StrictStr | None, Field(default=None, description="Why not: not_pending, not_allowed, already_voted.")]
    ]
    approvals: NotRequired[Annotated[int | None, Field(default=None, description="approve: the approvals it has now.")]]
    needed: NotRequired[Annotated[int | None, Field(default=None, description="approve: the approvals it needs.")]]
    expiresAt: NotRequired[Annotated[StrictStr | None, Field(default=None)]]
    repushed: NotRequired[Annotated[int | None, Field(default=None)]]
    sessionId: NotRequired[Annotated[StrictStr | None, Field(default=None)]]


class AckEvent(TypedDict):
    type: Literal["ack"]
    payload: AckPayload
    id: NotRequired[_FrameIdOrNone]
    sessionId: NotRequired[Annotated[StrictStr | None, Field(default=None)]]


class ErrorPayload(TypedDict):
    code: StrictStr
    message: StrictStr
    details: NotRequired[Annotated[list[ErrorDetail] | None, Field(default=None)]]


class ErrorEvent(TypedDict):
    type: Literal["error"]
    payload: ErrorPayload
    id: NotRequired[_FrameIdOrNone]
    sessionId: NotRequired[Annotated[StrictStr | None, Field(default=None)]]


class PongEvent(TypedDict):
    type: Literal["pong"]
    id: NotRequired[_FrameIdOrNone]


#: Each frame's type, by its ``type``: what a client parses a frame it got as.
EVENT_TYPES: dict[str, type[Any]] = {
    ASK: AskedEvent,
    CANCELLED: CancelledEvent,
    EXTENDED: ExtendedEvent,
    ESCALATED: EscalatedEvent,
    VOTED: VotedEvent,
    SNAPSHOT: SnapshotEvent,
    ACK: AckEvent,
    ERROR: ErrorEvent,
    PONG: PongEvent,
}


class ServerEvent(
    RootModel[
        Annotated[
            Union[AskedEvent, CancelledEvent, ExtendedEvent, EscalatedEvent, VotedEvent, SnapshotEvent, AckEvent, ErrorEvent, PongEvent],
            Field(discriminator="type"),
        ]
    ]
):
    """Any frame the daemon sends on ``/ws``."""
