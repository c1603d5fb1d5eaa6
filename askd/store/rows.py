"""A kept question's fields back into a :class:`Request`: one decoder for
every store that keeps rows (SQLite's columns, Redis's hash fields)."""

from __future__ import annotations

from askd.core import Request, Status
from askd.core.approvals import Approval
from askd.protocol import codec
from askd.core.records import Step
from askd.core.reminders import Remind


def request_from_row(
    request_id: str,
    session_id: str,
    user_id: str,
    created_at: float,
    expires_at: float,
    idempotency_key: str | None,
    frame: bytes | None,
    status: str,
    answers: bytes | None,
    error: str | None,
    ended_at: float | None,
    notified: bool,
    *,
    agent: str | None = None,
    max_extension: float = 0.0,
    extended: float = 0.0,
    on_timeout: bytes | None = None,
    answered_by: str | None = None,
    via: str | None = None,
    reason: str | None = None,
    defaulted: bool = False,
    digest: str | None = None,
    approval: bytes | str | None = None,
) -> Request:
    """The request as kept: a pending one with its frame, its allowance and
    its default, an ended one with its result (``answers``,
    ``on_timeout`` and an action's ``approval`` are UTF-8 JSON)."""
    req = Request(
        request_id, session_id, user_id, created_at, expires_at, idempotency_key=idempotency_key, status=Status(status), agent=agent
    )
    req.notified = notified
    if approval is not None:  # an action to approve (protocol section 17): its approvals, pending or ended
        req.approval = Approval.from_json(approval)
    if req.pending:
        req.frame = frame
        req.max_extension, req.extended = max_extension, extended
        req.on_timeout = codec.loads(on_timeout) if on_timeout is not None else None
    else:
        req.answers = codec.loads(answers) if answers is not None else None
        req.error, req.ended_at = error, ended_at
        req.answered_by, req.via, req.reason, req.defaulted = answered_by, via, reason, defaulted
        req.digest = digest
    return req


def steps_to_json(steps: tuple[Step, ...]) -> str | None:
    """A question's escalation steps as kept (None: it has none)."""
    return codec.dumps([[after, list(entries)] for after, entries in steps]).decode() if steps else None


def steps_from_json(text: str | bytes | None) -> tuple[Step, ...]:
    if not text:
        return ()
    return tuple((float(after), tuple(entries)) for after, entries in codec.loads(text))


def remind_to_json(remind: Remind | None) -> str | None:
    """A question's reminders as kept (None: none): ``[everySeconds, times]``."""
    return codec.dumps(list(remind)).decode() if remind is not None else None


def remind_from_json(text: str | bytes | None) -> Remind | None:
    if not text:
        return None
    every, times = codec.loads(text)
    return float(every), int(times)
