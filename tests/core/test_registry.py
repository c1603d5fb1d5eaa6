"""The core registry with a fake clock: the seed's unit cases (8.1 rows 1-6)
and the lifecycle rules, with no daemon and no sleeping."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from askd.core import (
    AskInput,
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    Limits,
    NotPending,
    SessionOwnerMismatch,
    Status,
    TooManyPending,
    UserOffline,
)
from askd.core.lifecycle import IllegalTransition, Trigger, next_status
from tests.support.registry_steps import StepRegistry


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def reg(clock: FakeClock) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(Limits(question_timeout=900, result_ttl=600), clock=clock, new_id=lambda: f"r{next(ids)}")


QS = [{"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]


def frames(reg: StepRegistry) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    return [(s.to, json.loads(s.event.frame)) for s in reg.drain().sends]


def tick(reg: StepRegistry, clock: FakeClock, seconds: float) -> None:
    """Move the clock and fire what is due, as the daemon's timer would."""
    clock.advance(seconds)
    deadline = reg.next_deadline()
    if deadline is not None and deadline <= clock.now:
        reg.advance()


# ---- seed 8.1 -------------------------------------------------------------


def test_row1_registered_question_is_listed_with_its_content(reg: StepRegistry) -> None:
    req, created = reg.ask("s1", "alice", QS, metadata={"tool": "x"})
    assert created
    [pending] = reg.pending(session_id="s1")
    assert pending.request_id == req.request_id
    assert pending.questions == QS
    assert pending.metadata == {"tool": "x"}


def test_row2_question_stays_pending_while_nobody_answers(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    reg.connect("c1", "alice")
    reg.disconnect("c1")
    tick(reg, clock, 899)
    assert req.pending
    assert reg.pending(session_id="s1") == [req]
    assert reg.drain().ended == []


def test_row3_answer_removes_it_and_completes_with_the_answers(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    reg.drain()
    reg.answer("s1", req.request_id, {"Which database?": "SQLite"}, user_id="alice")
    assert reg.pending(session_id="s1") == []
    out = reg.drain()
    assert out.ended == [req]
    assert req.result() == {
        "requestId": req.request_id,
        "sessionId": "s1",
        "status": "answered",
        "answers": {"Which database?": "SQLite"},
        "answeredBy": "alice",
        "via": "ws",
    }


def test_row4_session_cancel_fails_every_pending_question(reg: StepRegistry) -> None:
    a, _ = reg.ask("s1", "alice", QS)
    b, _ = reg.ask("s1", "alice", [{"question": "Deploy now?"}])
    reg.drain()
    assert reg.cancel_session("s1") == 2
    assert reg.pending(session_id="s1") == []
    assert [r.status for r in reg.drain().ended] == [Status.CANCELLED, Status.CANCELLED]
    assert a.result()["error"] == "Session cancelled" == b.result()["error"]


def test_withdraw_ends_one_question_and_leaves_ended_ones_alone(reg: StepRegistry) -> None:
    reg.connect("c1", "alice")
    a, _ = reg.ask("s1", "alice", QS)
    b, _ = reg.ask("s1", "alice", [{"question": "Deploy now?"}])
    reg.drain()
    assert reg.withdraw("s1", a.request_id) is a
    assert a.result() == {"requestId": "r1", "sessionId": "s1", "status": "cancelled", "error": "Withdrawn by agent"}
    assert [r.request_id for r in reg.pending(session_id="s1")] == [b.request_id]
    assert frames(reg) == [(("c1",), {"type": "ask_user_questions_cancelled", "sessionId": "s1", "payload": {"requestId": "r1", "reason": "cancelled"}})]
    assert reg.withdraw("s1", a.request_id) is a  # ended: returned unchanged, nothing sent
    assert reg.drain().sends == [] and reg.counters.cancelled == 1
    assert reg.withdraw("s1", "nope") is None and reg.withdraw("nope", "r1") is None


def test_a_session_named_star_is_refused(reg: StepRegistry) -> None:
    for kw in ({"session_id": "*"}, {"session_id": "s1", "parent_session_id": "*"}):
        sid = kw.pop("session_id")
        with pytest.raises(InvalidRequest, match="wildcard"):
            reg.ask(sid, "alice", QS, **kw)
    assert reg.stats()["asked"] == 0


def test_row5_timeout_ends_it_with_an_error(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS, timeout=0.25)
    reg.drain()
    assert reg.next_deadline() == pytest.approx(req.created_at + 0.25)
    tick(reg, clock, 0.2)
    assert req.pending
    tick(reg, clock, 0.05)
    assert req.status is Status.TIMEOUT
    assert req.result()["error"]
    assert reg.pending(session_id="s1") == []


def test_row6_subscribe_repushes_pending_with_original_request_id(reg: StepRegistry) -> None:
    first, _ = reg.ask("s1", "alice", QS, metadata={"m": 1})
    second, _ = reg.ask("s1", "alice", [{"question": "Deploy now?"}])
    reg.connect("c1", "alice")
    reg.drain()
    assert reg.subscribe("c1", "s1") == 2
    sent = frames(reg)
    assert [f["type"] for _, f in sent] == ["session_snapshot", "ask_user_questions", "ask_user_questions"]
    assert sent[0][1]["payload"] == {"active": True, "pending": 2}
    assert [f["payload"]["requestId"] for _, f in sent[1:]] == [first.request_id, second.request_id]
    assert sent[1][1]["payload"]["questions"] == QS
    assert sent[1][1]["payload"]["metadata"] == {"m": 1}
    assert all(to == ("c1",) for to, _ in sent)


# ---- pushes and who gets them ----------------------------------------------


def test_ask_pushes_to_every_connection_of_the_user_only(reg: StepRegistry) -> None:
    reg.connect("a1", "alice")
    reg.connect("a2", "alice")
    reg.connect("b1", "bob")
    req, _ = reg.ask("s1", "alice", QS)
    [(to, frame)] = frames(reg)
    assert set(to) == {"a1", "a2"}
    assert frame["type"] == "ask_user_questions"
    assert frame["sessionId"] == "s1"
    assert frame["payload"]["requestId"] == req.request_id
    assert frame["payload"]["createdAt"].endswith("Z")


def test_answer_sends_cancelled_answered_to_every_connection(reg: StepRegistry) -> None:
    reg.connect("a1", "alice")
    reg.connect("a2", "alice")
    req, _ = reg.ask("s1", "alice", QS)
    reg.drain()
    reg.answer("s1", req.request_id, {"Which database?": "PostgreSQL"}, user_id="alice")
    [(to, frame)] = frames(reg)
    assert set(to) == {"a1", "a2"}
    assert frame == {
        "type": "ask_user_questions_cancelled",
        "sessionId": "s1",
        "payload": {"requestId": req.request_id, "reason": "answered", "answeredBy": "alice", "via": "ws"},
    }


def test_a_question_is_encoded_once_for_all_connections_and_repushes(reg: StepRegistry) -> None:
    reg.connect("a1", "alice")
    reg.connect("a2", "alice")
    req, _ = reg.ask("s1", "alice", QS)
    [ask_send] = reg.drain().sends
    assert ask_send.to == ("a1", "a2")  # one event for every connection
    reg.subscribe("a1", "s1")
    repush = reg.drain().sends[1]
    # The very bytes kept with the question, not encoded again.
    assert ask_send.event.frame is req.frame and repush.event.frame is req.frame


def test_subscribe_all_replays_every_session_with_pending(reg: StepRegistry) -> None:
    reg.ask("s1", "alice", QS)
    reg.ask("s2", "alice", QS)
    done, _ = reg.ask("s3", "alice", QS)
    reg.ask("s4", "bob", QS)
    reg.answer("s3", done.request_id, {"Which database?": "x"})
    reg.connect("a1", "alice")
    reg.drain()
    assert reg.subscribe("a1", "*") == 2
    sent = frames(reg)
    assert [(f["type"], f["sessionId"]) for _, f in sent] == [
        ("session_snapshot", "s1"),
        ("ask_user_questions", "s1"),
        ("session_snapshot", "s2"),
        ("ask_user_questions", "s2"),
    ]


def test_subscribe_to_unknown_session_is_an_empty_snapshot(reg: StepRegistry) -> None:
    reg.connect("a1", "alice")
    assert reg.subscribe("a1", "nothing-yet") == 0
    [(_, frame)] = frames(reg)
    assert frame["payload"] == {"active": False, "pending": 0}


def test_subscribe_to_another_users_session_is_forbidden(reg: StepRegistry) -> None:
    reg.ask("s1", "alice", QS)
    reg.connect("b1", "bob")
    reg.drain()
    with pytest.raises(Forbidden):
        reg.subscribe("b1", "s1")
    assert reg.drain().sends == []


def test_disconnect_never_ends_a_question(reg: StepRegistry, clock: FakeClock) -> None:
    reg.connect("a1", "alice")
    req, _ = reg.ask("s1", "alice", QS)
    reg.disconnect("a1")
    assert req.pending
    assert reg.drain().ended == []
    assert reg.connections() == []


# ---- answers -----------------------------------------------------------------


def test_answer_from_another_user_is_not_pending_and_changes_nothing(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    with pytest.raises(NotPending):
        reg.answer("s1", req.request_id, {"Which database?": "x"}, user_id="bob")
    assert req.pending


def test_second_answer_is_not_pending_and_the_first_wins(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    reg.answer("s1", req.request_id, {"Which database?": "first"}, user_id="alice")
    reg.drain()
    with pytest.raises(NotPending):
        reg.answer("s1", req.request_id, {"Which database?": "second"}, user_id="alice")
    assert req.answers == {"Which database?": "first"}
    assert reg.drain().sends == []


@pytest.mark.parametrize(
    "answers",
    [
        {},
        {"Unknown question?": "x"},
        {"Which database?": 3},
        {"Which database?": ["a", "b"]},  # a list for a single-select question
        {"Which database?": None},
    ],
)
def test_invalid_answers_leave_the_question_pending(reg: StepRegistry, answers: dict[str, Any]) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    with pytest.raises(InvalidAnswer):
        reg.answer("s1", req.request_id, answers, user_id="alice")
    assert req.pending


def test_an_answer_is_checked_and_pushed_again_exactly_beside_integers_beyond_64_bits(reg: StepRegistry) -> None:
    # The answer check reads the kept frame without the exact-number scan;
    # the question's own numbers stay exact in every push.
    big = 2**70 + 1
    qs = [{"question": "Which database?", "multiSelect": True, "options": [{"label": "PostgreSQL", "rank": big}]}]
    req, _ = reg.ask("s1", "alice", qs, metadata={"ticket": big})
    reg.connect("c1", "alice")
    reg.subscribe("c1", "s1")
    pushed = [f for _, f in frames(reg) if f["type"] == "ask_user_questions"]
    assert pushed[0]["payload"]["questions"] == qs and pushed[0]["payload"]["metadata"] == {"ticket": big}
    with pytest.raises(InvalidAnswer):
        reg.answer("s1", req.request_id, {"Which database?": 1}, user_id="alice")
    reg.answer("s1", req.request_id, {"Which database?": ["PostgreSQL"]}, user_id="alice")
    assert req.answers == {"Which database?": ["PostgreSQL"]}


def test_multiselect_takes_a_list_and_free_text_is_allowed(reg: StepRegistry) -> None:
    qs = [{"question": "Which?", "multiSelect": True, "options": [{"label": "a"}, {"label": "b"}]}, {"question": "Why?"}]
    req, _ = reg.ask("s1", "alice", qs)
    reg.answer("s1", req.request_id, {"Which?": ["a", "my own"], "Why?": "because"}, user_id="alice")
    assert req.answers == {"Which?": ["a", "my own"], "Why?": "because"}


def test_answer_for_an_ended_question_racing_its_timeout(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS, timeout=1)
    tick(reg, clock, 1)
    with pytest.raises(NotPending):
        reg.answer("s1", req.request_id, {"Which database?": "late"}, user_id="alice")
    assert req.status is Status.TIMEOUT
    assert [r.status for r in reg.drain().ended] == [Status.TIMEOUT]


# ---- sessions ---------------------------------------------------------------


def test_session_belongs_to_the_first_asker(reg: StepRegistry) -> None:
    reg.ask("s1", "alice", QS)
    with pytest.raises(SessionOwnerMismatch):
        reg.ask("s1", "bob", QS)


def test_cancel_cascades_to_descendant_sessions_only(reg: StepRegistry) -> None:
    root, _ = reg.ask("root", "alice", QS)
    child, _ = reg.ask("child", "alice", QS, parent_session_id="root")
    grandchild, _ = reg.ask("grandchild", "alice", QS, parent_session_id="child")
    other, _ = reg.ask("other", "alice", QS)
    assert reg.cancel_session("root") == 3
    assert {root.status, child.status, grandchild.status} == {Status.CANCELLED}
    assert other.pending
    assert reg.cancel_session("child") == 0


def test_cancel_cascades_through_a_parent_that_never_asked(reg: StepRegistry) -> None:
    child, _ = reg.ask("child", "alice", QS, parent_session_id="agent-main")
    assert reg.owner("agent-main") == "alice"
    assert reg.cancel_session("agent-main") == 1
    assert child.status is Status.CANCELLED


def test_parent_of_another_user_and_cycles_are_refused(reg: StepRegistry) -> None:
    reg.ask("bobs", "bob", QS)
    with pytest.raises(SessionOwnerMismatch):
        reg.ask("mine", "alice", QS, parent_session_id="bobs")
    reg.ask("a", "alice", QS)
    reg.ask("b", "alice", QS, parent_session_id="a")
    with pytest.raises(InvalidRequest):
        reg.ask("a", "alice", QS, parent_session_id="b")
    with pytest.raises(InvalidRequest):
        reg.ask("c", "alice", QS, parent_session_id="c")


def test_idempotency_key_returns_the_same_request(reg: StepRegistry) -> None:
    first, created = reg.ask("s1", "alice", QS, idempotency_key="k")
    again, created_again = reg.ask("s1", "alice", QS, idempotency_key="k")
    other, _ = reg.ask("s2", "alice", QS, idempotency_key="k")
    assert created and not created_again
    assert again is first
    assert other is not first
    assert len(reg.pending(session_id="s1")) == 1


def test_require_online(reg: StepRegistry) -> None:
    with pytest.raises(UserOffline):
        reg.ask("s1", "alice", QS, require_online=True)
    reg.connect("a1", "alice")
    reg.ask("s1", "alice", QS, require_online=True)


def test_pending_caps(clock: FakeClock) -> None:
    reg = StepRegistry(Limits(max_pending_per_session=2, max_pending_total=3), clock=clock)
    reg.ask("s1", "alice", QS)
    reg.ask("s1", "alice", QS)
    with pytest.raises(TooManyPending):
        reg.ask("s1", "alice", QS)
    reg.ask("s2", "alice", QS)
    with pytest.raises(TooManyPending):
        reg.ask("s3", "alice", QS)


def test_pending_bytes_per_user_are_capped(clock: FakeClock) -> None:
    big = [{"question": "Big?", "description": "x" * 40_000}]
    # One agent may take the user's whole budget here: this is the user's cap (the agent's share: test_budgets.py).
    reg = StepRegistry(Limits(max_pending_bytes_per_user=100_000, max_user_share_per_agent=1.0), clock=clock)
    first, _ = reg.ask("s1", "alice", big)
    reg.ask("s2", "alice", big)
    with pytest.raises(TooManyPending, match="bytes of pending questions"):
        reg.ask("s3", "alice", big)
    reg.ask("s4", "bob", big)  # per user: bob is not held back by alice's
    reg.withdraw("s1", first.request_id)  # an ended question frees its bytes
    reg.ask("s3", "alice", big)


def test_pending_bytes_of_asks_in_flight_count_until_applied_or_released(clock: FakeClock) -> None:
    big = [{"question": "Big?", "description": "x" * 40_000}]
    # One agent may take the user's whole budget here: this is the user's cap (the agent's share: test_budgets.py).
    reg = StepRegistry(Limits(max_pending_bytes_per_user=100_000, max_user_share_per_agent=1.0), clock=clock)
    _, first = reg.prepare_ask(AskInput("s1", "alice", big))  # one batch: none stored yet
    _, second = reg.prepare_ask(AskInput("s2", "alice", big))
    assert first is not None and second is not None
    with pytest.raises(TooManyPending, match="bytes of pending questions"):
        reg.prepare_ask(AskInput("s3", "alice", big))
    reg.prepare_ask(AskInput("s4", "bob", big))  # per user, in flight too
    reg.release(first)  # its commit failed: its bytes are free
    reg.release(first)  # and only once
    _, third = reg.prepare_ask(AskInput("s3", "alice", big))
    assert third is not None
    reg.apply(second)  # stored: its bytes move from in flight to pending, counted once
    with pytest.raises(TooManyPending, match="bytes of pending questions"):
        reg.prepare_ask(AskInput("s5", "alice", big))
    reg.release(third)
    reg.prepare_ask(AskInput("s5", "alice", big))


def test_timeout_over_max_is_refused(reg: StepRegistry) -> None:
    with pytest.raises(InvalidRequest):
        reg.ask("s1", "alice", QS, timeout=86400 * 2)


# ---- results and memory -----------------------------------------------------


def test_result_is_kept_for_the_ttl_then_forgotten_with_its_session(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS, idempotency_key="k")
    reg.answer("s1", req.request_id, {"Which database?": "x"})
    tick(reg, clock, 599)
    assert reg.get("s1", req.request_id) is req
    tick(reg, clock, 1)
    assert reg.get("s1", req.request_id) is None
    assert reg.owner("s1") is None  # an empty session is forgotten
    assert reg.stats()["sessions"] == 0
    # the key went with the result: the same key asks anew
    again, created = reg.ask("s1", "bob", QS, idempotency_key="k")
    assert created and again is not req


def test_parent_is_forgotten_after_its_last_child(reg: StepRegistry, clock: FakeClock) -> None:
    child, _ = reg.ask("child", "alice", QS, parent_session_id="parent", timeout=1)
    tick(reg, clock, 1)
    assert child.status is Status.TIMEOUT
    tick(reg, clock, 600)
    assert reg.stats()["sessions"] == 0


def test_heap_does_not_keep_answered_questions_forever(reg: StepRegistry) -> None:
    for i in range(5000):
        req, _ = reg.ask(f"s{i % 50}", "alice", QS)
        reg.answer(req.session_id, req.request_id, {"Which database?": "x"})
        reg.drain()
        reg.next_deadline()
    # every ended request has one retention entry; stale deadlines were compacted
    assert len(reg.schedule) < 5000 + 1100


def test_stale_count_holds_when_another_nodes_timeout_wins(reg: StepRegistry, clock: FakeClock) -> None:
    """On a shared store this node's timer and another node's may both
    decide a timeout; whichever ``Ended`` applies, the heap's count of stale
    entries matches the heap (compaction relies on it)."""
    from askd.core.changes import Ended
    from askd.core.lifecycle import TIMEOUT_ERROR, Trigger

    popped, _ = reg.ask("s1", "alice", QS, timeout=10)  # this node's timer pops it first
    remote, _ = reg.ask("s1", "alice", QS, timeout=10)  # another node's timeout arrives first
    clock.advance(5)
    reg.apply(Ended("s1", remote.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, clock.now))
    clock.advance(6)
    [mine] = reg.due()  # the remote one's entry is stale: only the other is decided
    other_node = Ended("s1", popped.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, clock.now)
    assert reg.apply(other_node) and not reg.apply(mine)  # the other node's won
    stale = sum(1 for _, kind, r in reg.schedule.entries() if kind == "timeout" and not r.pending)
    assert reg.schedule._stale == stale == 0


def test_next_deadline_skips_questions_that_already_ended(reg: StepRegistry, clock: FakeClock) -> None:
    early, _ = reg.ask("s1", "alice", QS, timeout=10)
    late, _ = reg.ask("s1", "alice", QS, timeout=100)
    assert reg.next_deadline() == pytest.approx(clock.now + 10)
    reg.answer("s1", early.request_id, {"Which database?": "x"})
    assert reg.next_deadline() == pytest.approx(clock.now + 100)


def test_stats(reg: StepRegistry, clock: FakeClock) -> None:
    reg.connect("a1", "alice")
    a, _ = reg.ask("s1", "alice", QS)
    reg.ask("s2", "alice", QS, timeout=1)
    reg.ask("s3", "alice", QS)
    reg.answer("s1", a.request_id, {"Which database?": "x"})
    tick(reg, clock, 1)
    reg.cancel_session("s3")
    assert reg.stats() == {
        "connections": 1,
        "users": 1,
        "sessions": 3,
        "pending": 0,
        "asked": 3,
        "answered": 1,
        "timedOut": 1,
        "cancelled": 1,
        "declined": 0,
        "repushed": 0,
    }


# ---- the lifecycle table ------------------------------------------------------


def test_lifecycle_only_leaves_pending_once() -> None:
    assert next_status(Status.PENDING, Trigger.ANSWER) is Status.ANSWERED
    assert next_status(Status.PENDING, Trigger.EXPIRE) is Status.TIMEOUT
    assert next_status(Status.PENDING, Trigger.CANCEL) is Status.CANCELLED
    for end in (Status.ANSWERED, Status.TIMEOUT, Status.CANCELLED):
        for trigger in Trigger:
            with pytest.raises(IllegalTransition):
                next_status(end, trigger)
