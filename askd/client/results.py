"""Typed views of what askd returns to agents, parsed against the wire's
one definition (``askd.protocol.results.QuestionResult``), and building
asks from the shared question models (``askd.protocol.models``).

The pydantic models are imported when a result is parsed or a question
built, not with this module: ``askd hook`` reads its one result with
``read_result(..., check=False)`` and never loads them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from askd.protocol.status import Status

if TYPE_CHECKING:
    from askd.protocol.action import Scope
    from askd.protocol.models import Answers, Question
    from askd.protocol.results import ApprovalGiven

    QuestionLike = Question | Mapping[str, Any] | str

__all__ = ["QuestionLike", "Result", "Status", "question_dicts"]


@dataclass(frozen=True, slots=True)
class Result:
    """A question's state as the agent API reports it. ``answers`` is set
    when ``status`` is ``answered`` (or ``timeout`` with ``defaulted``: the
    ask's ``on_timeout``); ``error`` when it timed out or was cancelled.
    Answered or declined: ``answered_by`` and ``via``; declined: ``reason``.
    Once ended: ``receipt``, askd's signed statement of the end
    (``askd.receipts.verify`` checks it; protocol section 16).

    An approval (section 17) adds ``approvals`` (so far, in order) and, once
    ended, ``approved`` (True only when answered), ``arguments`` (the final
    ones, edited or as asked), ``edited`` and ``scope`` (``once`` or
    ``always`` when approved). For a question they stay None."""

    request_id: str
    session_id: str
    status: Status
    answers: Answers | None = None
    error: str | None = None
    created_at: str | None = None
    expires_at: str | None = None
    answered_by: str | None = None
    via: str | None = None
    reason: str | None = None
    defaulted: bool = False
    receipt: str | None = None
    approvals: list[ApprovalGiven] | None = None
    approved: bool | None = None
    arguments: dict[str, Any] | None = None
    edited: bool | None = None
    scope: Scope | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        """A result, or an ask's ``201`` reply (``PendingBody``, the same
        keys and ``createdAt``); raises pydantic's ``ValidationError`` (a
        ``ValueError``) when it is neither."""
        return read_result(data)

    @property
    def escalations(self) -> int | None:
        """Escalation steps taken so far; None when asked without ``escalate``."""
        n = self.raw.get("escalations")
        return int(n) if n is not None else None

    @property
    def pending(self) -> bool:
        return self.status is Status.pending

    @property
    def answered(self) -> bool:
        return self.status is Status.answered


def read_result(data: Mapping[str, Any], check: bool = True) -> Result:
    """``Result.from_json``. ``check=False`` reads the same keys without
    checking them against ``QuestionResult`` (nor importing pydantic): only
    for a caller that acts on nothing but what it tests itself, as ``askd
    hook`` allows only when ``approved is True``; a missing key or an unknown
    status still raises ``KeyError`` or ``ValueError``."""
    if check:
        from askd.protocol.parse import parse
        from askd.protocol.results import QuestionResult

        result: Mapping[str, Any] = parse(QuestionResult, data)
    else:
        result = data
    return Result(
        request_id=result["requestId"],
        session_id=result["sessionId"],
        status=Status(result["status"]),
        answers=result.get("answers"),
        error=result.get("error"),
        created_at=data.get("createdAt"),
        expires_at=result.get("expiresAt"),
        answered_by=result.get("answeredBy"),
        via=result.get("via"),
        reason=result.get("reason"),
        defaulted=result.get("defaulted") is True,
        receipt=result.get("receipt"),
        approvals=result.get("approvals"),
        approved=result.get("approved"),
        arguments=result.get("arguments"),
        edited=result.get("edited"),
        scope=result.get("scope"),
        raw=dict(data),
    )


def __getattr__(name: str) -> Any:
    # ``QuestionLike`` at run time (annotations read it only when checking
    # types), made when first imported: it names the pydantic ``Question``.
    if name == "QuestionLike":
        from askd.protocol.models import Question

        return Question | Mapping[str, Any] | str
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def question_dicts(questions: QuestionLike | Iterable[QuestionLike]) -> list[dict[str, Any]]:
    """Questions as the wire wants them. A string is a free-text question; a
    mapping is checked against ``Question`` and sent as given (unknown fields
    pass through); a ``Question`` is sent with the fields that were set."""
    from askd.protocol.models import Question

    if isinstance(questions, (str, Question, Mapping)):
        questions = [questions]
    out: list[dict[str, Any]] = []
    for item in questions:
        if isinstance(item, str):
            out.append({"question": item})
        elif isinstance(item, Question):
            out.append(item.model_dump(mode="json", exclude_unset=True))
        else:
            Question.model_validate(dict(item))  # fail early, before the daemon does
            out.append(dict(item))
    return out
