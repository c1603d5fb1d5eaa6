"""Wire models of the frames the daemon sends on ``/ws`` (spec section 3).

The daemon builds its frames itself (``events.py``); these models describe
them for clients: ``askd schema`` puts them in the wire's JSON Schema, from
which the JavaScript client's types are generated. Newer daemons may add
fields. The envelope is ``{"type", "sessionId"?, "payload"?, "id"?}``;
``"id"`` only in a reply to a client frame that carried one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictBool, StrictStr

from askd.core.models import Answers, ErrorDetail, Id, Question


class AskedPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    questions: list[Question] = Field(description="As the agent sent them, unknown fields included.")
    metadata: dict[str, Any]
    createdAt: StrictStr
    expiresAt: StrictStr
    to: list[StrictStr] | None = Field(
        default=None,
        description="Whom it is asked of now (users and group:G), for a team question or one with escalation steps; "
        "absent: asked of this user alone.",
    )
    escalations: int | None = Field(default=None, description="Escalation steps taken so far (asked with escalate only).")
    escalatedTo: list[StrictStr] | None = Field(
        default=None, description="The entries the steps taken added: the tail of to (asked with escalate only)."
    )
    maxExtensionSeconds: float | None = Field(
        default=None, description="The time the person may add in all (only when the ask allows some)."
    )
    extensionLeftSeconds: float | None = Field(
        default=None, description="What is left of that allowance (only when the ask allows some)."
    )


class AskedEvent(BaseModel):
    """``ask_user_questions``: a question for this user, live or re-pushed by a subscribe."""

    type: Literal["ask_user_questions"]
    sessionId: Id
    payload: AskedPayload


class CancelledPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    reason: StrictStr = Field(
        description="How the question ended: answered, timeout, cancelled, declined, reassigned (no longer yours)."
    )
    answeredBy: StrictStr | None = Field(
        default=None, description="Who answered or declined (answered, declined); null: an admin without a name."
    )
    via: StrictStr | None = Field(default=None, description="How: ws, link, mcp or admin (answered, declined).")
    declineReason: StrictStr | None = Field(default=None, description="The reason given with a decline, if any.")
    answers: Answers | None = Field(
        default=None, description="For a timeout that took the ask's onTimeout default: the answers it ended with."
    )
    defaulted: StrictBool | None = Field(default=None, description="true with those answers (timeout only).")


class CancelledEvent(BaseModel):
    """``ask_user_questions_cancelled``: the question ended."""

    type: Literal["ask_user_questions_cancelled"]
    sessionId: Id
    payload: CancelledPayload


class ExtendedPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    expiresAt: StrictStr
    maxExtensionSeconds: float | None = Field(default=None, description="As in ask_user_questions.")
    extensionLeftSeconds: float | None = Field(
        default=None, description="What is left of the person's allowance now (only when the ask allows some)."
    )


class ExtendedEvent(BaseModel):
    """``ask_user_questions_extended``: the question's deadline moved."""

    type: Literal["ask_user_questions_extended"]
    sessionId: Id
    payload: ExtendedPayload


class EscalatedPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    to: list[StrictStr] = Field(description="Whom it is asked of now, as in ask_user_questions.")
    escalations: int = Field(description="Escalation steps taken so far.")
    escalatedTo: list[StrictStr] = Field(description="The entries the steps taken added: the tail of to.")


class EscalatedEvent(BaseModel):
    """``ask_user_questions_escalated``: an escalation step widened the
    audience of a question this user already has (new members get
    ``ask_user_questions`` instead)."""

    type: Literal["ask_user_questions_escalated"]
    sessionId: Id
    payload: EscalatedPayload


class SnapshotPayload(BaseModel):
    active: StrictBool
    pending: int


class SnapshotEvent(BaseModel):
    """``session_snapshot``: sent on subscribe, before the re-pushed questions."""

    type: Literal["session_snapshot"]
    sessionId: Id
    payload: SnapshotPayload
    id: StrictStr | int | None = None


class AckPayload(BaseModel):
    """One of ``{"accepted", "reason"?}`` (answer, decline), ``{"repushed",
    "sessionId"}`` (subscribe), ``{"extended", "expiresAt"?, "reason"?}``
    (extend), ``{}`` (unsubscribe)."""

    model_config = ConfigDict(extra="allow")

    accepted: StrictBool | None = None
    extended: StrictBool | None = None
    reason: StrictStr | None = Field(default=None, description="Why not: not_pending, not_allowed.")
    expiresAt: StrictStr | None = None
    repushed: int | None = None
    sessionId: StrictStr | None = None


class AckEvent(BaseModel):
    type: Literal["ack"]
    payload: AckPayload
    id: StrictStr | int | None = None
    sessionId: StrictStr | None = None


class ErrorPayload(BaseModel):
    code: StrictStr
    message: StrictStr
    details: list[ErrorDetail] | None = None


class ErrorEvent(BaseModel):
    type: Literal["error"]
    payload: ErrorPayload
    id: StrictStr | int | None = None
    sessionId: StrictStr | None = None


class PongEvent(BaseModel):
    type: Literal["pong"]
    id: StrictStr | int | None = None


class ServerEvent(
    RootModel[
        Annotated[
            Union[AskedEvent, CancelledEvent, ExtendedEvent, EscalatedEvent, SnapshotEvent, AckEvent, ErrorEvent, PongEvent],
            Field(discriminator="type"),
        ]
    ]
):
    """Any frame the daemon sends on ``/ws``."""
