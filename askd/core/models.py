"""Moved to :mod:`askd.protocol.models` (what peers send) and
:mod:`askd.protocol.results` (what the APIs answer); this path stays for code
not yet updated (issue 31)."""

from askd.protocol.ids import Id, NonEmpty  # noqa: F401
from askd.protocol.models import *  # noqa: F401,F403
from askd.protocol.models import (  # noqa: F401
    MAX_GROUP_MEMBERS,
    MAX_PREVIEW_CHARS,
    MAX_STEPS,
    MAX_TO,
    AgentAnswerBody,
    AgentDeclineBody,
    AnswerBody,
    Answers,
    AnswerValue,
    AskBody,
    AskFields,
    DeclineBody,
    EscalationStep,
    ExtendBody,
    GroupBody,
    OnBehalf,
    OnTimeout,
    Option,
    Question,
    UserBody,
    check_answers,
    json_number,
)
from askd.protocol.results import ApiError, ErrorBody, ErrorDetail, PendingBody, PendingQuestion, QuestionResult  # noqa: F401
from askd.protocol.status import Status, Via  # noqa: F401
