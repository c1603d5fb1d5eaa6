"""The core takes each end's digest while the questions are still held
(they are dropped once it ends): every kind of end, with a fake clock."""

from __future__ import annotations

from askd.core import Status
from tests.core.test_registry import FakeClock, clock, reg, tick  # noqa: F401  (clock, reg: the core tests' fixtures)
from tests.receipts.independent import digest_of
from tests.support.registry_steps import StepRegistry

QS = [{"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}], "x": {"b": 1, "a": [2.5]}}]


def test_an_answer_keeps_the_digest_of_the_questions_as_asked_and_the_answers(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    reg.answer("s1", req.request_id, {"Which database?": "SQLite"}, user_id="alice")
    assert req.frame is None  # the questions are gone...
    assert req.digest == digest_of({"questions": QS, "answers": {"Which database?": "SQLite"}})  # ...their digest is not


def test_a_timeout_a_default_a_withdraw_and_a_cancel_keep_theirs(reg: StepRegistry, clock: FakeClock) -> None:
    plain, _ = reg.ask("s1", "alice", QS, timeout=1)
    default = {"Which database?": "PostgreSQL"}
    defaulted, _ = reg.ask("s1", "alice", QS, timeout=1, on_timeout=default)
    withdrawn, _ = reg.ask("s1", "alice", QS)
    cancelled, _ = reg.ask("s2", "alice", QS)
    tick(reg, clock, 1.5)
    reg.withdraw("s1", withdrawn.request_id)
    reg.cancel_session("s2")
    assert [r.status for r in (plain, defaulted, withdrawn, cancelled)] == [Status.TIMEOUT, Status.TIMEOUT, Status.CANCELLED, Status.CANCELLED]
    none = digest_of({"questions": QS, "answers": None})
    assert (plain.digest, withdrawn.digest, cancelled.digest) == (none, none, none)
    assert defaulted.digest == digest_of({"questions": QS, "answers": default})
    # A pending question has none yet.
    pending, _ = reg.ask("s3", "alice", QS)
    assert pending.digest is None
