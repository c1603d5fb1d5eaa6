"""Webhook notifications in the core: a due time in the one deadline heap,
reported through ``drain().notify`` (spec E), with the fake clock."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askd.core import Limits, NotifyPolicy
from askd.core.changes import Notified
from tests.core.test_registry import QS, FakeClock, tick
from tests.support.registry_steps import StepRegistry


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def registry(clock: FakeClock, after: float = 60.0, only_offline: bool = False) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(
        Limits(question_timeout=900, result_ttl=600),
        clock=clock,
        new_id=lambda: f"r{next(ids)}",
        notify=NotifyPolicy(after=after, only_offline=only_offline),
    )


def due(reg: StepRegistry) -> list[str]:
    return [r.request_id for r in reg.drain().notify]


def test_without_a_policy_nothing_is_ever_due(clock: FakeClock) -> None:
    reg = StepRegistry(Limits(), clock=clock)
    reg.ask("s1", "alice", QS)
    assert due(reg) == []
    assert reg.next_deadline() == clock.now + 900  # only the timeout is in the heap
    tick(reg, clock, 899)
    assert due(reg) == []


def test_after_zero_is_due_with_the_ask(clock: FakeClock) -> None:
    reg = registry(clock, after=0)
    reg.ask("s1", "alice", QS)
    assert due(reg) == ["r1"]
    tick(reg, clock, 899)
    assert due(reg) == []  # once only


def test_a_delayed_notification_is_a_deadline_in_the_heap(clock: FakeClock) -> None:
    reg = registry(clock, after=60)
    t0 = clock.now
    reg.ask("s1", "alice", QS)
    assert due(reg) == []
    assert reg.next_deadline() == t0 + 60  # the one timer is armed for it
    tick(reg, clock, 59.9)
    assert due(reg) == []
    tick(reg, clock, 0.1)
    assert due(reg) == ["r1"]
    assert reg.next_deadline() == t0 + 900  # then the timeout
    tick(reg, clock, 840)
    assert due(reg) == []


def test_the_time_counts_from_creation_and_each_question_has_its_own(clock: FakeClock) -> None:
    reg = registry(clock, after=60)
    reg.ask("s1", "alice", QS)
    tick(reg, clock, 30)
    reg.ask("s2", "bob", QS)
    tick(reg, clock, 30)
    assert due(reg) == ["r1"]
    tick(reg, clock, 30)
    assert due(reg) == ["r2"]


def test_an_idempotent_repeat_schedules_nothing_more(clock: FakeClock) -> None:
    reg = registry(clock, after=0)
    reg.ask("s1", "alice", QS, idempotency_key="k")
    reg.ask("s1", "alice", QS, idempotency_key="k")
    assert due(reg) == ["r1"]


@pytest.mark.parametrize("end", ["answer", "cancel", "timeout"])
def test_a_question_that_ended_first_is_not_due_and_its_entry_is_dropped(clock: FakeClock, end: str) -> None:
    reg = registry(clock, after=60)
    t0 = clock.now
    req, _ = reg.ask("s1", "alice", QS, timeout=30 if end == "timeout" else None)
    if end == "answer":
        reg.answer("s1", req.request_id, {"Which database?": "SQLite"})
    elif end == "cancel":
        reg.cancel_session("s1")
    else:
        tick(reg, clock, 30)
    reg.drain()
    # The stale notify entry does not wake the timer: the next deadline is
    # the result's retention end.
    assert reg.next_deadline() == req.ended_at + 600
    clock.now = t0 + 61
    reg.advance()
    assert due(reg) == []


def test_only_offline_is_judged_at_the_due_moment(clock: FakeClock) -> None:
    reg = registry(clock, after=60, only_offline=True)
    reg.connect("c1", "alice")
    reg.ask("s1", "alice", QS)  # online when asked...
    reg.disconnect("c1")  # ...offline when it comes due
    reg.ask("s2", "bob", QS)  # offline when asked...
    reg.connect("c2", "bob")  # ...online when it comes due
    tick(reg, clock, 60)
    assert due(reg) == ["r1"]
    tick(reg, clock, 600)
    assert due(reg) == []  # bob going offline later does not bring his back


def test_only_offline_with_after_zero_uses_the_moment_of_the_ask(clock: FakeClock) -> None:
    reg = registry(clock, after=0, only_offline=True)
    reg.connect("c1", "alice")
    reg.ask("s1", "alice", QS)
    reg.ask("s2", "bob", QS)
    assert due(reg) == ["r2"]


def test_another_users_connection_does_not_count(clock: FakeClock) -> None:
    reg = registry(clock, after=0, only_offline=True)
    reg.connect("c1", "bob")
    reg.ask("s1", "alice", QS)
    assert due(reg) == ["r1"]


def test_mark_notified_sets_the_flag_and_a_reload_does_not_report_it_again(clock: FakeClock) -> None:
    reg = registry(clock, after=0)
    req, _ = reg.ask("s1", "alice", QS)
    assert due(reg) == ["r1"]
    assert not req.notified
    assert reg.apply(Notified("s1", "r1")) is True
    assert req.notified
    reloaded = registry(clock, after=0)
    reloaded.restore(req)  # what a store's reload does
    assert due(reloaded) == []
    assert reg.apply(Notified("s1", "nope")) is False
    assert reg.apply(Notified("nope", "r1")) is False


def test_a_reload_past_the_due_time_reports_it_at_the_next_advance(clock: FakeClock) -> None:
    reg = registry(clock, after=60)
    req, _ = reg.ask("s1", "alice", QS)
    # As if askd had been down while the due time passed: the heap entry is
    # consumed by the first advance after the restart.
    clock.advance(120)
    reg.advance()
    assert due(reg) == ["r1"]
    reloaded = registry(clock, after=60)
    reloaded.restore(req)  # not marked: a reload schedules it again
    assert reloaded.next_deadline() is not None and reloaded.next_deadline() <= clock.now  # type: ignore[operator]
    reloaded.advance()
    assert due(reloaded) == ["r1"]


def test_many_notify_entries_of_ended_questions_are_compacted_away(clock: FakeClock) -> None:
    reg = registry(clock, after=60)
    reqs = [reg.ask(f"s{i}", "alice", QS)[0] for i in range(3000)]
    for req in reqs[:2999]:
        reg.answer(req.session_id, req.request_id, {"Which database?": "SQLite"})
    reg.drain()
    reg.next_deadline()
    # What is left: one timeout and one notify of the pending question, and
    # one retention end per ended one; no stale entry of either kind.
    kinds = sorted(kind for _, kind, _ in reg.schedule.entries() if kind != "forget")
    assert kinds == ["notify", "timeout"]
    tick(reg, clock, 60)
    assert due(reg) == [reqs[-1].request_id]


# ---- any order of events -------------------------------------------------

USERS = ("alice", "bob")
step = st.one_of(
    st.tuples(st.just("ask"), st.sampled_from(USERS)),
    st.tuples(st.just("answer"), st.integers(0, 20)),
    st.tuples(st.just("connect"), st.sampled_from(USERS)),
    st.tuples(st.just("disconnect"), st.integers(0, 20)),
    st.tuples(st.just("tick"), st.sampled_from([0.0, 5.0, 30.0, 60.0, 61.0, 400.0])),
)


@settings(max_examples=150, deadline=None)
@given(after=st.sampled_from([0.0, 60.0]), only_offline=st.booleans(), steps=st.lists(step, max_size=40))
def test_each_question_is_reported_once_when_due_if_pending_and_as_only_offline_says(
    after: float, only_offline: bool, steps: list[tuple[str, Any]]
) -> None:
    clock = FakeClock()
    reg = registry(clock, after=after, only_offline=only_offline)
    conns: list[tuple[str, str]] = []  # (connection id, user), open ones
    asked: list[Any] = []
    reported: set[str] = set()
    n = 0
    for kind, arg in steps:
        expected: set[str] = set()
        online = {user for _, user in conns}
        if kind == "ask":
            req, _ = reg.ask(f"s{len(asked)}", arg, QS)
            asked.append(req)
            if after == 0 and not (only_offline and arg in online):
                expected = {req.request_id}
        elif kind == "answer" and asked:
            req = asked[arg % len(asked)]
            if req.pending:
                reg.answer(req.session_id, req.request_id, {"Which database?": "SQLite"})
        elif kind == "connect":
            n += 1
            reg.connect(f"c{n}", arg)
            conns.append((f"c{n}", arg))
        elif kind == "disconnect" and conns:
            conn_id, _ = conns.pop(arg % len(conns))
            reg.disconnect(conn_id)
        elif kind == "tick":
            before = clock.now
            clock.advance(arg)
            # What came due in (before, now] while pending; timeouts (900 s)
            # are later than any due time here, so nothing ended meanwhile.
            expected = {
                r.request_id
                for r in asked
                if after > 0 and before < r.created_at + after <= clock.now and r.pending
                and not (only_offline and r.user_id in online)
            }
            deadline = reg.next_deadline()
            if deadline is not None and deadline <= clock.now:
                reg.advance()
        got = [r.request_id for r in reg.drain().notify]
        assert len(got) == len(set(got)) and not set(got) & reported, "reported twice"
        assert set(got) == expected, (kind, arg, got, expected)
        reported |= set(got)
