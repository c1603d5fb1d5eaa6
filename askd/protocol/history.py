"""A person's history (protocol section 19): what ``GET /v1/me/history``
sends. The handler (``askd.server.http.audit_api``) builds these as plain
dicts; ``askd schema`` describes them and the JavaScript client's
``Inbox.history()`` is typed from that, so the shape is defined once here."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr
from typing_extensions import TypedDict

from askd.protocol.ids import Id
from askd.protocol.models import Answers
from askd.protocol.status import Status, Via


#: How it ended: an answer's or a decline's way in (``Via``), or who cancelled it (``agent``, ``admin``).
HistoryVia = Literal[Via, "agent"]


class HistoryEntry(TypedDict):
    """One question that ended with the user in its audience."""

    sessionId: Id
    requestId: Id
    header: Annotated[
        StrictStr | None,
        Field(
            description=(
                "What the person was asked, as plain text: the first question's header, else a summary of its text "
                "(its first sentence, Markdown stripped; an action: its summary, else its name), at most 200 characters; "
                "kept with the end in the history index. Null for a question asked before askd kept titles."
            )
        ),
    ]
    status: Status  # how it ended (never pending); a withdrawn question is cancelled
    answers: Annotated[
        Answers | None,
        Field(description="Keyed by question text, while askd still keeps the question; else null (the trail holds no texts)."),
    ]
    answeredBy: Annotated[
        StrictStr | None, Field(description="Answered or declined: who did (null otherwise, or an admin without a sub).")
    ]
    via: Annotated[
        HistoryVia | None,
        Field(description="Answered or declined: ws, link, mcp or admin; cancelled: agent or admin; timed out: null."),
    ]
    endedAt: Annotated[StrictStr, Field(description="When it ended, RFC 3339 UTC.")]


class HistoryBody(TypedDict):
    """``GET /v1/me/history``: the last 100 ended questions, newest first."""

    questions: list[HistoryEntry]
