"""What the agent and admin APIs answer (protocol section 5): a question's
result, the reply to an ask, a pending question as listings show it, and
the error envelope.

Each is a ``TypedDict``: the daemon builds it as a plain dict
(``Request.result()``, ``Request.describe()``, the handlers), ``askd schema``
describes it, and ``askd.client`` parses it (``adapter``). A key that may be
absent is ``NotRequired``; its ``Field(default=None)`` is what the schema
says and what a parse fills in. Newer daemons may add keys.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictStr, with_config
from typing_extensions import NotRequired, TypedDict

from askd.protocol.action import Action, Scope
from askd.protocol.ids import Id
from askd.protocol.models import Answers, Question
from askd.protocol.status import Status, Via


class ApprovalGiven(TypedDict):
    """One approval of an action (section 17), in the order given."""

    by: Annotated[StrictStr | None, Field(description="Who approved (null: an admin without a sub).")]
    via: Via
    at: Annotated[StrictStr, Field(description="When, RFC 3339 UTC.")]


class QuestionResult(TypedDict):
    """A question's state as the agent API reports it (``GET
    .../questions/{R}``): ``answers`` once answered, ``error`` once it timed
    out or was cancelled. The MCP tools' output schema is generated from it."""

    requestId: Id
    sessionId: Id
    status: Status
    answers: NotRequired[Annotated[Answers | None, Field(default=None, description="Keyed by question text; a list for multiSelect.")]]
    error: NotRequired[Annotated[StrictStr | None, Field(default=None)]]
    expiresAt: NotRequired[
        Annotated[StrictStr | None, Field(default=None, description="While pending: the deadline, as extensions moved it.")]
    ]
    defaulted: NotRequired[
        Annotated[StrictBool | None, Field(default=None, description="True: timed out, answers are the ask's onTimeout default.")]
    ]
    answeredBy: NotRequired[
        Annotated[
            StrictStr | None,
            Field(default=None, description="Answered or declined: the user who did (null for an admin without a sub)."),
        ]
    ]
    via: NotRequired[Annotated[Via | None, Field(default=None, description="Answered or declined: how.")]]
    onBehalfOf: NotRequired[
        Annotated[StrictStr, Field(description="Answered or declined by a delegate of this away user (protocol section 20).")]
    ]
    reason: NotRequired[Annotated[StrictStr | None, Field(default=None, description="Declined: the reason the person gave, if any.")]]
    escalations: NotRequired[
        Annotated[int | None, Field(default=None, description="Escalation steps taken so far (asked with escalate).")]
    ]
    approvals: NotRequired[
        Annotated[list[ApprovalGiven] | None, Field(default=None, description="An action's approvals so far, in order.")]
    ]
    approved: NotRequired[
        Annotated[StrictBool | None, Field(default=None, description="An ended action: true only when answered (approved).")]
    ]
    arguments: NotRequired[
        Annotated[
            dict[str, Any] | None, Field(default=None, description="An ended action: the final arguments, edited or as asked.")
        ]
    ]
    edited: NotRequired[
        Annotated[StrictBool | None, Field(default=None, description="An ended action: the arguments differ from those asked.")]
    ]
    scope: NotRequired[
        Annotated[
            Scope | None,
            Field(default=None, description="An approved action: always when every approval chose it, else once."),
        ]
    ]
    receipt: NotRequired[
        Annotated[
            StrictStr | None,
            Field(
                default=None,
                description="Once ended: a compact JWS (EdDSA) askd signed over the result; check it with /.well-known/jwks.json.",
            ),
        ]
    ]


class PendingBody(TypedDict):
    """The ``201`` reply to an ask: the question is pending."""

    requestId: Id
    sessionId: Id
    status: Literal["pending"]
    createdAt: StrictStr
    expiresAt: StrictStr


class DeliveryStatus(TypedDict):
    """What became of one notification of a pending question, as the node
    answering made it (protocol section 6): per channel and recipient, the
    latest outcome."""

    channel: Annotated[StrictStr, Field(description="webhook, email or slack.")]
    recipient: Annotated[
        StrictStr | None,
        Field(description="The user it is for, a Slack channel (#C123), or null for the channel's one message or a whole notice."),
    ]
    status: Literal["sent", "failed", "retrying"]
    reason: NotRequired[
        Annotated[StrictStr | None, Field(default=None, description="Why it failed, or why it is retried: one line, no question text.")]
    ]
    attempts: Annotated[int, Field(description="Attempts made; 0 when it failed before any (dropped, or no claim taken).")]
    at: Annotated[StrictStr, Field(description="When this outcome was recorded, RFC 3339 UTC.")]


@with_config(ConfigDict(extra="allow"))
class PendingQuestion(TypedDict):
    """A pending question as listings show it (``GET .../questions``, admin ``pending``)."""

    sessionId: Id
    userId: NotRequired[Annotated[Id | None, Field(default=None, description="Only for a question asked of one user.")]]
    to: Annotated[list[StrictStr], Field(description="Whom it is asked of now: user ids and group:NAME entries.")]
    escalations: NotRequired[Annotated[int | None, Field(default=None)]]
    requestId: Id
    questions: NotRequired[Annotated[list[Question] | None, Field(default=None, description="Absent for an action.")]]
    action: NotRequired[Annotated[Action | None, Field(default=None, description="An action to approve, as asked.")]]
    quorum: NotRequired[Annotated[int | None, Field(default=None, description="Approvals needed (action only).")]]
    approvals: NotRequired[Annotated[list[ApprovalGiven] | None, Field(default=None, description="Approvals so far (action only).")]]
    metadata: dict[str, Any]
    createdAt: StrictStr
    expiresAt: StrictStr
    deliveries: NotRequired[
        Annotated[
            list[DeliveryStatus] | None,
            Field(default=None, description="Admin listing only: its notifications on this node, once one was attempted or failed."),
        ]
    ]


class ErrorDetail(TypedDict):
    loc: Annotated[StrictStr, Field(description="The dotted path of the field at fault; empty for the whole request.")]
    msg: StrictStr


class ApiError(TypedDict):
    code: StrictStr
    message: StrictStr
    details: NotRequired[Annotated[list[ErrorDetail] | None, Field(default=None)]]


class ErrorBody(TypedDict):
    """Every HTTP error: ``{"error": {"code", "message", "details"?}}``."""

    error: ApiError
