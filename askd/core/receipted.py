"""The digest an ended question's receipt carries (protocol section 16),
taken when its end is decided: the questions are dropped once it ends."""

from __future__ import annotations

from typing import Any

from askd.core.records import Request
from askd.receipts.digest import digest, questions_content


def ended_digest(req: Request, answers: Any) -> str:
    """``digest`` of the questions as asked (as listings show them) and the
    answers it ends with (None: none)."""
    return digest(questions_content(req.questions, answers))
