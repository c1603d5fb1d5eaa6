"""What no one value may stop, in the core with a fake clock: a question's
end (its receipt's digest cannot be taken: it ends without one), and the
clock (one deadline's kind raises: it is retried with a backoff, and every
other deadline fires on time)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from askd.core import Limits, Request, Status
from askd.core.registry import deadlines
from askd.core.registry.deadlines import Deadlines
from askd.core.changes import Ended
from askd.core.registry.deadlines import RETRY_MAX_SECONDS
from tests.support.registry_steps import StepRegistry

NOW = 1_800_000_000.0
# An integer no double holds: RFC 8785 cannot write it, so no digest. askd
# refuses it at the door now; a question stored before that may hold one.
BIG = int("9" * 309)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def reg(clock: Clock) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(Limits(question_timeout=900, result_ttl=600), clock=clock, new_id=lambda: f"r{next(ids)}")


def at(reg: StepRegistry, clock: Clock, when: float) -> None:
    """Move the clock to ``when`` and fire what is due, as the daemon's timer would."""
    clock.now = when
    reg.advance()


def status(reg: StepRegistry, rid: str, session: str = "s") -> Status:
    req = reg.get(session, rid)
    assert req is not None
    return req.status


def action(reg: StepRegistry, session: str = "s", **extra: Any) -> str:
    req, _ = reg.ask(session, "", None, to=("alice",), action={"name": "deploy", "arguments": {"n": BIG}, **extra}, **_timeout(extra))
    return req.request_id


def _timeout(extra: dict[str, Any]) -> dict[str, Any]:
    return {"timeout": extra.pop("timeout")} if "timeout" in extra else {}


# ---- a digest never stops an end ------------------------------------------


ENDS: dict[str, Callable[[StepRegistry, str], None]] = {
    "withdraw": lambda reg, rid: reg.apply(reg.prepare_withdraw("s", rid)[1]),  # type: ignore[arg-type]
    "cancel": lambda reg, rid: reg.apply(reg.prepare_cancel("s")[0]),
    "decline": lambda reg, rid: reg.apply(reg.prepare_decline("s", rid, "no", user_id="alice")),
    "approve": lambda reg, rid: reg.apply(reg.prepare_approve("s", rid, user_id="alice")),
}


@pytest.mark.parametrize("end", ENDS, ids=list(ENDS))
def test_an_action_whose_arguments_have_no_canonical_json_still_ends_without_a_digest(reg: StepRegistry, end: str) -> None:
    rid = action(reg, editable=True)
    ENDS[end](reg, rid)
    req = reg.get("s", rid)
    assert req is not None and not req.pending and req.digest is None


def test_an_approval_edited_from_such_arguments_is_digested_over_the_edit(reg: StepRegistry) -> None:
    # The arguments approved are the edit's (I-JSON, as the door takes them):
    # the receipt covers those, and telling them from the asked ones raises not.
    rid = action(reg, editable=True)
    reg.apply(reg.prepare_approve("s", rid, {"n": 1}, user_id=None, answered_by="root"))
    req = reg.get("s", rid)
    assert req is not None and req.status is Status.ANSWERED and req.digest is not None
    assert req.approval is not None and req.approval.edited


def test_a_question_without_canonical_json_times_out_and_the_next_deadline_fires(reg: StepRegistry, clock: Clock) -> None:
    planted = action(reg, timeout=10)
    asked, _ = reg.ask("s2", "alice", [{"question": "Deploy?", "rank": BIG}], timeout=11)
    innocent, _ = reg.ask("s3", "bob", [{"question": "Tag?"}], timeout=12)
    at(reg, clock, NOW + 10)
    assert status(reg, planted) is Status.TIMEOUT and reg.get("s", planted).digest is None  # type: ignore[union-attr]
    at(reg, clock, NOW + 11)
    assert asked.status is Status.TIMEOUT and asked.digest is None
    at(reg, clock, NOW + 12)
    assert innocent.status is Status.TIMEOUT and innocent.digest is not None
    assert reg.failing_deadlines() == []


# ---- the clock survives anything ------------------------------------------


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Request ids whose timeout raises when it fires, as the digest did
    before askd caught it: through the very function that raised."""
    failing: set[str] = set()
    real = deadlines.ended_digest

    def ended_digest(req: Request, answers: Any) -> str | None:
        if req.request_id in failing:
            raise OverflowError("int too large to convert to float")
        return real(req, answers)

    monkeypatch.setattr(deadlines, "ended_digest", ended_digest)
    return failing


def test_a_deadline_that_raises_is_retried_with_a_backoff_and_the_others_fire_on_time(
    reg: StepRegistry, clock: Clock, planted: set[str]
) -> None:
    bad, _ = reg.ask("s1", "alice", [{"question": "Bad?"}], timeout=10)
    planted.add(bad.request_id)
    others = [reg.ask(f"s{i}", "alice", [{"question": "Q?"}], timeout=10 + i)[0] for i in range(1, 5)]
    at(reg, clock, NOW + 10)
    assert bad.pending
    [failure] = reg.drain_deadline_failures()
    assert (failure.kind, failure.key, failure.attempts, failure.since) == ("timeout", bad, 1, NOW + 10)
    assert isinstance(failure.error, OverflowError)
    assert reg.next_deadline() == NOW + 11  # the retry (10 + 1) and the next question's own
    for i, other in enumerate(others, start=1):
        at(reg, clock, NOW + 10 + i)
        assert other.status is Status.TIMEOUT and other.ended_at == NOW + 10 + i
    # Retried at 11, 13, 17: each failure doubles the wait.
    tries = [f.attempts for f in reg.drain_deadline_failures()]
    assert tries == [2, 3]
    [still] = reg.failing_deadlines()
    assert (still.key, still.attempts, still.retry_at, still.since) == (bad, 3, NOW + 17, NOW + 10)
    planted.clear()  # mended: the next try ends it, as a timeout at that moment
    at(reg, clock, NOW + 17)
    assert bad.status is Status.TIMEOUT and bad.ended_at == NOW + 17
    assert reg.failing_deadlines() == [] and reg.drain_deadline_failures() == []


def test_the_backoff_is_bounded(reg: StepRegistry, clock: Clock, planted: set[str]) -> None:
    bad, _ = reg.ask("s1", "alice", [{"question": "Bad?"}], timeout=10)
    planted.add(bad.request_id)
    at(reg, clock, NOW + 10)
    waits = []
    for _ in range(9):
        nxt = reg.next_deadline()
        assert nxt is not None
        waits.append(nxt - clock.now)
        at(reg, clock, nxt)
    assert waits == [1, 2, 4, 8, 16, 32, RETRY_MAX_SECONDS, RETRY_MAX_SECONDS, RETRY_MAX_SECONDS]
    assert bad.pending and reg.failing_deadlines()[0].attempts == 10


def test_a_failing_deadline_is_let_go_once_its_question_ends_another_way(reg: StepRegistry, clock: Clock, planted: set[str]) -> None:
    bad, _ = reg.ask("s1", "alice", [{"question": "Bad?"}], timeout=10)
    planted.add(bad.request_id)
    at(reg, clock, NOW + 10)
    assert len(reg.failing_deadlines()) == len(reg.drain_deadline_failures()) == 1
    reg.answer("s1", bad.request_id, {"Bad?": "yes"}, user_id="alice")
    assert bad.status is Status.ANSWERED and reg.failing_deadlines() == []
    at(reg, clock, NOW + 11)  # the retry's entry no longer counts
    assert bad.status is Status.ANSWERED and reg.drain_deadline_failures() == []


def test_a_failing_deadline_moved_later_fires_at_its_new_time_not_at_the_retry(
    reg: StepRegistry, clock: Clock, planted: set[str]
) -> None:
    bad, _ = reg.ask("s1", "alice", [{"question": "Bad?"}], timeout=10)
    planted.add(bad.request_id)
    at(reg, clock, NOW + 10)
    reg.apply(reg.prepare_extend("s1", bad.request_id, 30))
    assert reg.failing_deadlines() == []
    planted.clear()
    at(reg, clock, NOW + 11)
    assert bad.pending  # the retry at 11 was for the old deadline
    at(reg, clock, NOW + 40)
    assert bad.status is Status.TIMEOUT


def test_a_kind_that_raises_even_in_alive_leaves_the_schedule_going(
    reg: StepRegistry, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An away's end, whose ``alive`` and ``fire`` both read the away: the
    schedule still says when next, the entry is fired, its failure retried
    like any other, and the question due after it ends on time."""
    reg.apply(reg.prepare_away("alice", NOW + 10, ["bob"]))
    good, _ = reg.ask("s2", "carol", [{"question": "Good?"}], timeout=11)

    def away_until(self: Deadlines, user: str) -> float | None:
        raise RuntimeError("a kind's bug")

    monkeypatch.setattr(Deadlines, "away_until", away_until)
    assert reg.next_deadline() == NOW + 10
    at(reg, clock, NOW + 10)
    [failure] = reg.drain_deadline_failures()
    assert (failure.kind, failure.key, failure.attempts) == ("away", "alice", 1)
    at(reg, clock, NOW + 11)
    assert good.status is Status.TIMEOUT and good.ended_at == NOW + 11
    assert [f.attempts for f in reg.drain_deadline_failures()] == [2]
    monkeypatch.undo()
    at(reg, clock, NOW + 13)
    assert "alice" not in reg.audiences.aways and reg.failing_deadlines() == []


def test_an_end_decided_by_a_retry_is_an_ordinary_timeout(reg: StepRegistry, clock: Clock, planted: set[str]) -> None:
    bad, _ = reg.ask("s1", "alice", [{"question": "Bad?"}], timeout=10, on_timeout={"Bad?": "no"})
    planted.add(bad.request_id)
    at(reg, clock, NOW + 10)
    planted.clear()
    clock.now = NOW + 11
    [change] = reg.due()
    assert isinstance(change, Ended) and change.answers == {"Bad?": "no"} and change.defaulted and change.digest is not None
