"""The digest an ended question's receipt carries (protocol section 16),
taken when its end is decided: the questions (or the action) are dropped
once it ends.

A digest never stops an end. What askd takes is I-JSON (protocol section
5), but a question stored before askd refused integers beyond 2**53 may
hold one no double holds (309 digits), which RFC 8785 cannot write: that
question still ends, durable, and its waiters wake, with no digest, so
its result carries no ``receipt`` (docs/decisions.md, "What no value may
stop"). The front end logs it (``Commits``), with the request's ids.
"""

from __future__ import annotations

from typing import Any

from askd.core.records import Request
from askd.receipts.digest import approval_content, canonical, digest, questions_content


def ended_digest(req: Request, answers: Any) -> str | None:
    """``digest`` of the questions as asked (as listings show them) and the
    answers it ends with (None: none); for an action, of the action with
    its arguments as asked and no scope (it ends not approved). None when
    the content cannot be canonicalized (see above)."""
    if req.approval is not None:
        return approval_digest(req, req.approval.arguments, None)
    return _digest_or_none(questions_content(req.questions, answers))


def approval_digest(req: Request, arguments: Any, scope: str | None) -> str | None:
    """``digest`` of a pending action's name with ``arguments`` and ``scope``
    (section 17: what an executor recomputes); None as ``ended_digest``."""
    name = req.ask_payload()["action"]["name"]
    return _digest_or_none(approval_content({"name": name, "arguments": arguments}, scope))


def same_content(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same content (their canonical JSON),
    or, where one has none (see above), equal as Python values."""
    try:
        return canonical(a) == canonical(b)
    except Exception:  # not canonicalizable: compare as parsed
        return bool(a == b)


def _digest_or_none(content: Any) -> str | None:
    try:
        return digest(content)
    except Exception:  # whatever the value, the end goes on (docstring above)
        return None
