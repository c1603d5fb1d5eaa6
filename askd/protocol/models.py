"""Wire models of questions, asks and answers (protocol sections 4 and 5): what
peers send the daemon.

One definition, used by the daemon to validate and by ``askd.client`` to
build requests (what the daemon sends back is ``results`` and ``events``). Questions are validated with these models but stored and
re-pushed exactly as the agent sent them, so unknown fields pass through
untouched and nothing is added.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pydantic_core import InitErrorDetails, PydanticCustomError

from askd.addresses import EmailAddress
from askd.protocol.action import MAX_QUORUM, Action, ApproveBody, arguments_problem
from askd.protocol.ids import Id, Label, NonEmpty
from askd.protocol.relay import HostKey, OnBehalf
from askd.protocol.remind import Remind
# An option's preview (a diff, a file): long, but bounded; the request body
# limit (limits.max_request_bytes) applies as well.
MAX_PREVIEW_CHARS = 100_000
AnswerValue = Union[StrictStr, list[StrictStr]]
Answers = dict[StrictStr, AnswerValue]


#: The most members a group holds (a team, not a directory).
MAX_GROUP_MEMBERS = 1000


class GroupBody(BaseModel):
    """``PUT /admin/v1/groups/{G}``: the group's members (user ids),
    replacing any before; stored sorted and de-duplicated."""

    model_config = ConfigDict(extra="forbid", strict=True)

    members: list[Id] = Field(max_length=MAX_GROUP_MEMBERS)


#: A Slack user id (``U0123ABCD``; ``W...`` on Enterprise Grid).
SlackId = Annotated[str, Field(pattern=r"^[UW][A-Z0-9]{1,31}$")]


class UserBody(BaseModel):
    """``PUT /admin/v1/users/{U}``: the user's e-mail address (checked and
    normalized, on any domain: askd.addresses) and Slack user id, each
    ``null`` to forget it; one left out stays as it is (one is needed)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    email: EmailAddress | None = None
    slack: SlackId | None = None

    @model_validator(mode="after")
    def _something(self) -> UserBody:
        if not self.model_fields_set:
            raise ValueError("give email or slack (null forgets it)")
        return self


class Option(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    label: Label = Field(
        description="The choice as the user sees it (plain text), and as the answer gives it back; no control, bidirectional or zero-width character."
    )
    description: StrictStr | None = Field(default=None, description="A line explaining the choice (Markdown).")
    preview: Annotated[StrictStr, Field(max_length=MAX_PREVIEW_CHARS)] | None = Field(
        default=None,
        description=(
            "Markdown shown beside the choice while it is focused or chosen, e.g. a code block or a "
            "```diff block; at most 100,000 characters."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _not_a_plain_string(cls, v: Any) -> Any:
        # The likeliest first try is ["yes", "no"]: say the fix, not only "a dictionary".
        if isinstance(v, str):
            raise ValueError('an option is an object: write {"label": "..."}, not a plain string')
        return v


class Question(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    question: NonEmpty = Field(description="The question text (Markdown); the answer is keyed by it.")
    header: StrictStr | None = Field(default=None, description="A short title shown above the question (plain text).")
    options: list[Option] | None = Field(
        default=None, description="Choices to offer (none: a free-text question); the user may still type their own."
    )
    multiSelect: StrictBool = Field(default=False, description="The user may pick several options; the answer is then a list.")

    @field_validator("options")
    @classmethod
    def _labels_unique(cls, options: list[Option] | None) -> list[Option] | None:
        if options:
            labels = [o.label for o in options]
            if len(set(labels)) != len(labels):
                raise ValueError("option labels must be unique within a question")
        return options


def json_number(v: Any) -> Any:
    """A ``mode="before"`` validator for float fields of strict models:
    strict mode refuses ints for floats, but JSON has one number type. An
    integer past a double's range (309 digits and more) and a float literal
    that overflows one (``1e999``) are refused here, in range of the field's
    own error, not left to raise (``OverflowError``) or become infinity."""
    if isinstance(v, bool):
        raise ValueError("must be a number")
    if isinstance(v, int):
        try:
            v = float(v)
        except OverflowError:
            raise _not_finite() from None
    if isinstance(v, float) and not math.isfinite(v):
        raise _not_finite()
    return v


def _not_finite() -> PydanticCustomError:
    return PydanticCustomError("finite_number", "Input should be a finite number")


def _check_questions(questions: list[Question] | None, info: ValidationInfo) -> list[Question] | None:
    if questions is None:  # an approval (AskBody's action) asks none
        return None
    limit = (info.context or {}).get("max_questions", 20)
    if not 1 <= len(questions) <= limit:
        raise ValueError(f"must hold 1 to {limit} questions")
    texts = [q.question for q in questions]
    if len(set(texts)) != len(texts):
        raise ValueError("question texts must be unique within a request")
    return questions


class OnTimeout(BaseModel):
    """The answers a question ends with if nobody answers in time."""

    model_config = ConfigDict(extra="forbid", strict=True)

    answers: dict[str, Any] = Field(description="Checked against the questions like an answer.")


#: ``to`` holds 1 to this many entries; ``escalate`` 1 to 5 steps (protocol
#: section 5, Asking a team and Escalation): a question's audience stays small
#: enough to notify at once.
MAX_TO = 20
MAX_STEPS = 5


def _check_entry(entry: str) -> str:
    if entry.startswith("group:") and len(entry) == len("group:"):
        raise ValueError("group: needs a group's name")
    return entry


# A user id, or ``group:G`` naming a group.
Entry = Annotated[Id, AfterValidator(_check_entry)]
To = Annotated[
    list[Entry],
    Field(
        min_length=1,
        max_length=MAX_TO,
        description="Whom to ask: user ids and group:NAME entries; any of them may answer.",
    ),
]


class AwayBody(BaseModel):
    """``PUT /admin/v1/users/{U}/away`` (protocol section 20, Away): until when (RFC 3339, in
    the future) and to whom the user's questions also go meanwhile (user
    ids and ``group:G``; at least one, not the user themself)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    until: StrictStr
    delegates: list[Entry] = Field(min_length=1, max_length=MAX_GROUP_MEMBERS)


class EscalationStep(BaseModel):
    """When nobody has answered ``afterSeconds`` after the ask, ``to`` joins the question's audience."""

    model_config = ConfigDict(extra="forbid", strict=True)

    afterSeconds: float = Field(gt=0, description="Seconds after the ask; below the question's timeout.")
    to: To

    _after_number = field_validator("afterSeconds", mode="before")(json_number)


class AskFields(BaseModel):
    """What an ask asks, whoever asks it: the HTTP ask body below and the MCP
    tool ``ask_user_questions`` (``askd.mcp``) both validate with this, and
    the tool's input schema is generated from it. Validate with a context
    giving ``max_questions`` and ``max_timeout``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    questions: list[Question] = Field(
        description="The questions, asked together; each needs a unique 'question' text.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="Any JSON object, passed to the user's client untouched."
    )
    timeoutSeconds: float | None = Field(
        default=None, gt=0, description="Seconds the user has to answer (default: the daemon's, 900)."
    )
    maxExtensionSeconds: float = Field(
        default=0, ge=0, description="The total time the person may add to the deadline (at most max_timeout_seconds)."
    )
    onTimeout: OnTimeout | None = Field(
        default=None, description="A safe default: on timeout the result carries these answers and defaulted: true."
    )

    to: To | None = None
    escalate: list[EscalationStep] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_STEPS,
        description="Steps that widen the audience while nobody answers; afterSeconds strictly increasing.",
    )
    remind: Remind | None = Field(default=None, description="Remind those with no open tab; null: none (default: notify.remind_*).")

    _questions_ok = field_validator("questions")(_check_questions)

    _extension_number = field_validator("maxExtensionSeconds", mode="before")(json_number)

    @model_validator(mode="after")
    def _default_fits(self) -> AskFields:
        """onTimeout's answers are checked against the questions like an answer."""
        if self.onTimeout is not None and self.questions is not None:
            problem = check_answers(self.onTimeout.answers, {q.question: q.multiSelect for q in self.questions})
            if problem:
                raise _invalid(type(self).__name__, ("onTimeout", "answers"), problem, self.onTimeout.answers)
        return self

    # That afterSeconds increase, each below the timeout, is the core's to
    # check (Registry.prepare_ask), with the step's own loc.

    def audience(self) -> tuple[tuple[str, ...] | None, tuple[tuple[float, tuple[str, ...]], ...]]:
        """``to`` and the escalation steps as the core takes them."""
        to = tuple(self.to) if self.to is not None else None
        return to, tuple((s.afterSeconds, tuple(s.to)) for s in self.escalate or ())

    _timeout_number = field_validator("timeoutSeconds", mode="before")(json_number)

    @field_validator("timeoutSeconds")
    @classmethod
    def _capped(cls, v: float | None, info: ValidationInfo) -> float | None:
        cap = (info.context or {}).get("max_timeout")
        if v is not None and cap is not None and v > cap:
            raise ValueError(f"must be at most max_timeout_seconds ({cap:g})")
        return v


def _invalid(title: str, loc: tuple[str | int, ...], problem: str, value: Any) -> ValidationError:
    """A model's error at ``loc`` (a validator's own ``ValueError`` would be the model's, loc "")."""
    error = PydanticCustomError("invalid", "{problem}", {"problem": problem})
    return ValidationError.from_exception_data(title, [InitErrorDetails(type=error, loc=loc, input=value)])


class AskBody(AskFields):
    """``POST /v1/sessions/{S}/questions``: questions, or an ``action`` to
    approve (section 17). Validate with a context giving ``max_questions``
    and ``max_timeout``."""

    # Optional here (an approval asks an action instead), required in AskFields:
    # a narrowing mypy cannot accept in a subclass; a validator requires exactly one of the two.
    questions: list[Question] | None = Field(  # type: ignore[assignment]
        default=None, description="The questions, asked together; each needs a unique 'question' text. Or action."
    )
    action: Action | None = Field(default=None, description="An action to approve, instead of questions.")
    quorum: int | None = Field(
        default=None, ge=1, le=MAX_QUORUM, description="Approvals needed from distinct people (action only; default 1)."
    )
    userId: Id | None = None
    requireOnline: StrictBool = False
    parentSessionId: Id | None = None
    hostKey: HostKey | None = Field(
        default=None, description="A secret of the asking process: only a relay carrying it may answer for the person in its host."
    )

    @model_validator(mode="after")
    def _one_audience(self) -> AskBody:
        if (self.userId is None) == (self.to is None):
            raise ValueError("give exactly one of userId and to")
        return self

    @model_validator(mode="after")
    def _questions_or_action(self) -> AskBody:
        """Exactly one of questions and action; what an approval may not
        carry; its arguments against its schema (jsonschema)."""
        title, action = type(self).__name__, self.action
        if (self.questions is None) == (action is None):
            raise _invalid(title, ("action",), "give exactly one of questions and action", None)
        if action is None:
            if self.quorum is not None:
                raise _invalid(title, ("quorum",), "quorum is for an action, not for questions", self.quorum)
            return self
        if self.onTimeout is not None:
            raise _invalid(title, ("onTimeout",), "an action takes no onTimeout: silence is never consent", None)
        if self.quorum is not None and self.quorum > 1 and action.editable:
            raise _invalid(title, ("quorum",), "an editable action needs a quorum of 1", self.quorum)
        problem = arguments_problem(action.schema_, action.arguments)
        if problem is not None:
            where, msg = problem
            loc = ("action", "arguments", *(where.split(".") if where else ()))
            raise _invalid(title, loc, msg, None)
        return self


class DeclineBody(BaseModel):
    """``POST /admin/v1/sessions/{S}/questions/{R}/decline``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    reason: StrictStr | None = Field(default=None, max_length=1000)


class ExtendBody(BaseModel):
    """``POST /v1/sessions/{S}/questions/{R}/extend``: the agent moves its
    own deadline by ``seconds``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seconds: float = Field(gt=0, le=86400)

    _number = field_validator("seconds", mode="before")(json_number)


class AnswerBody(BaseModel):
    """``POST /admin/v1/sessions/{S}/questions/{R}/answer``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # Only the shape here; content is checked against the question (check_answers).
    answers: dict[str, Any]


#: The header an ask names its channel with, for the audit trail's ``via``
#: (protocol section 19): ``askd mcp`` sends ``mcp``; without it, ``agent``.
VIA_HEADER = "Askd-Via"
ASK_VIAS = ("agent", "mcp")


class AgentAnswerBody(AnswerBody, OnBehalf):
    """``POST /v1/sessions/{S}/questions/{R}/answer``."""


class AgentDeclineBody(DeclineBody, OnBehalf):
    """``POST /v1/sessions/{S}/questions/{R}/decline``."""


class AgentApproveBody(ApproveBody, OnBehalf):
    """``POST /v1/sessions/{S}/questions/{R}/approve``: one approval of an
    action (section 17) by the person who approved in the agent's host."""


def check_answers(answers: dict[str, Any], multi_select: dict[str, bool]) -> str | None:
    """Check answers against their question; return what is wrong, or None.

    ``multi_select`` maps each question text of the request to its
    ``multiSelect`` flag. Keys must name questions; a value is a string, or a
    list of strings for a multiSelect question. Answering a subset is allowed
    (a user may skip an optional question), but not answering nothing.
    """
    if not answers:
        return "answers must answer at least one question"
    for key, value in answers.items():
        if key not in multi_select:
            return f"no question {key!r} in this request"
        if isinstance(value, list):
            if not multi_select[key]:
                return f"question {key!r} takes one answer, not a list"
            if not all(isinstance(v, str) for v in value):
                return f"answers to {key!r} must be strings"
        elif not isinstance(value, str):
            return f"answer to {key!r} must be a string"
    return None
