"""Client frames of the WebSocket protocol (protocol section 3), parsed and
checked in the spec's order: JSON (``bad_json``), then an object with a known
``type`` (``unknown_type``), then the fields of that type
(``invalid_request``). Ownership, state and answer content are the
registry's to check.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator

from askd.protocol import codec
from askd.protocol.action import Scope
from askd.protocol.ids import FrameId, Id
from askd.protocol.models import json_number


class FrameError(Exception):
    def __init__(self, code: str, message: str, frame_id: Any = None, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = frame_id
        self.details = details


class _Frame(BaseModel):
    # Unknown fields are ignored so newer clients keep working.
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    id: FrameId = None


class Subscribe(_Frame):
    type: Literal["subscribe"]
    sessionId: Id  # or "*"


class Unsubscribe(_Frame):
    type: Literal["unsubscribe"]
    sessionId: Id


class AnswerFrame(_Frame):
    type: Literal["ask_user_questions_result"]
    sessionId: Id
    requestId: Id
    answers: dict[str, Any]


class Ping(_Frame):
    type: Literal["ping"]


class ExtendFrame(_Frame):
    """The person asks for more time (``Registry.prepare_extend``)."""

    type: Literal["extend"]
    sessionId: Id
    requestId: Id
    seconds: float = Field(gt=0, le=86400)

    _number = field_validator("seconds", mode="before")(json_number)


class DeclineFrame(_Frame):
    """The person refuses to answer (``Registry.prepare_decline``)."""

    type: Literal["decline"]
    sessionId: Id
    requestId: Id
    reason: StrictStr | None = Field(default=None, max_length=1000)


class ApproveFrame(_Frame):
    """The person approves an action (``Registry.prepare_approve``): with
    edited ``arguments`` when it is editable, ``scope`` ``always`` when it
    allows that. Denying is ``decline``."""

    type: Literal["approve"]
    sessionId: Id
    requestId: Id
    arguments: dict[str, Any] | None = None
    scope: Scope | None = None


Frame = Union[Subscribe, Unsubscribe, AnswerFrame, ExtendFrame, DeclineFrame, ApproveFrame, Ping]

FRAME_TYPES: dict[str, type[_Frame]] = {
    "subscribe": Subscribe,
    "unsubscribe": Unsubscribe,
    "ask_user_questions_result": AnswerFrame,
    "extend": ExtendFrame,
    "decline": DeclineFrame,
    "approve": ApproveFrame,
    "ping": Ping,
}


def validation_details(err: ValidationError) -> list[dict[str, Any]]:
    """Pydantic errors as ``[{"loc": "a.b", "msg": ...}]``, without echoing input."""
    return [{"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"]} for e in err.errors()]


def parse_frame(text: str | bytes) -> Frame:
    beyond: list[dict[str, Any]] = []
    try:
        data = codec.loads_bounded(text)
    except codec.TooDeep:
        raise FrameError("invalid_request", f"frame is nested deeper than {codec.MAX_DEPTH} levels") from None
    except codec.NotIJson as err:  # a field out of range: check 7 of protocol section 3's order, below
        data, beyond = err.doc, err.details
    except ValueError as err:
        raise FrameError("bad_json", f"frame is {codec.not_json(err)}") from None
    if not isinstance(data, dict):
        raise FrameError("invalid_request", "a frame must be a JSON object")
    frame_id = data.get("id")
    if not isinstance(frame_id, (str, int)) or isinstance(frame_id, bool) or any(d["loc"] == "id" for d in beyond):
        frame_id = None  # an id out of I-JSON's range is not echoed: a page could not read it back
    kind = data.get("type")
    model = FRAME_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise FrameError("unknown_type", f"unknown frame type {kind!r}"[:200], frame_id)
    if beyond:
        raise FrameError("invalid_request", f"invalid {kind} frame: {', '.join(d['loc'] for d in beyond)}", frame_id, beyond)
    try:
        # FRAME_TYPES holds only Frame's members, but a dict cannot say so to mypy.
        return model.model_validate(data)  # type: ignore[return-value]
    except ValidationError as err:
        details = validation_details(err)
        where = ", ".join(d["loc"] or "frame" for d in details)
        raise FrameError("invalid_request", f"invalid {kind} frame: {where}", frame_id, details) from None
