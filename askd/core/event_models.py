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

from askd.core.models import ErrorDetail, Id, Question


class AskedPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    questions: list[Question] = Field(description="As the agent sent them, unknown fields included.")
    metadata: dict[str, Any]
    createdAt: StrictStr
    expiresAt: StrictStr


class AskedEvent(BaseModel):
    """``ask_user_questions``: a question for this user, live or re-pushed by a subscribe."""

    type: Literal["ask_user_questions"]
    sessionId: Id
    payload: AskedPayload


class CancelledPayload(BaseModel):
    model_config = ConfigDict(extra="allow")

    requestId: Id
    reason: StrictStr = Field(description="How the question ended: answered, timeout, cancelled.")
    answeredBy: StrictStr | None = Field(default=None, description="Who answered, when the daemon says.")


class CancelledEvent(BaseModel):
    """``ask_user_questions_cancelled``: the question ended."""

    type: Literal["ask_user_questions_cancelled"]
    sessionId: Id
    payload: CancelledPayload


class ExtendedPayload(BaseModel):
    requestId: Id
    expiresAt: StrictStr


class ExtendedEvent(BaseModel):
    """``ask_user_questions_extended``: the question's deadline moved."""

    type: Literal["ask_user_questions_extended"]
    sessionId: Id
    payload: ExtendedPayload


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
            Union[AskedEvent, CancelledEvent, ExtendedEvent, SnapshotEvent, AckEvent, ErrorEvent, PongEvent],
            Field(discriminator="type"),
        ]
    ]
):
    """Any frame the daemon sends on ``/ws``."""
