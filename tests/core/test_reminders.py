"""Reminders in the core (protocol section 20): a deadline kind of the one
schedule, reported through ``drain().reminders`` for the audience members
with no tab on this node, with the fake clock."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from askd.core import Limits, NotifyPolicy, Request
from tests.core.test_registry import QS, FakeClock, tick
from tests.support.registry_steps import StepRegistry


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def registry(clock: FakeClock, notify: NotifyPolicy | None = NotifyPolicy(after=0)) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(
        Limits(question_timeout=900, result_ttl=600), clock=clock, new_id=lambda: f"r{next(ids)}", notify=notify
    )


def reminded(reg: StepRegistry) -> list[tuple[str, int, list[str], list[str]]]:
    return [(req.request_id, k, users, offline) for req, k, users, offline in reg.drain_reminders()]


def kept(req: Request) -> Request:
    """The request as a store gives it back: another object."""
    return dataclasses.replace(req)


def test_each_reminder_comes_at_its_time_as_many_times_as_asked(clock: FakeClock) -> None:
    reg = registry(clock)
    t0 = clock.now
    reg.ask("s1", "alice", QS, remind=(60.0, 3))
    assert reminded(reg) == []
    assert reg.next_deadline() == t0 + 60
    tick(reg, clock, 59.9)
    assert reminded(reg) == []
    tick(reg, clock, 0.1)
    assert reminded(reg) == [("r1", 1, ["alice"], ["alice"])]
    assert reg.next_deadline() == t0 + 120
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 2, ["alice"], ["alice"])]
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 3, ["alice"], ["alice"])]
    assert reg.next_deadline() == t0 + 900  # three times: then only the timeout
    tick(reg, clock, 600)
    assert reminded(reg) == []


def test_no_reminder_without_remind_or_without_notifications(clock: FakeClock) -> None:
    reg = registry(clock)
    reg.ask("s1", "alice", QS)
    quiet = registry(clock, notify=None)
    quiet.ask("s1", "alice", QS, remind=(60.0, 3))
    assert quiet.next_deadline() == clock.now + 900  # only the timeout is in the heap
    for r in (reg, quiet):
        tick(r, clock, 0)
    for _ in range(10):
        tick(reg, clock, 60)
        tick(quiet, clock, 0)
        assert reminded(reg) == reminded(quiet) == []


def test_none_after_the_end(clock: FakeClock) -> None:
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, remind=(60.0, 5))
    tick(reg, clock, 60)
    assert [k for _, k, _, _ in reminded(reg)] == [1]
    reg.answer("s1", "r1", {QS[0]["question"]: "Yes"})
    for _ in range(5):
        tick(reg, clock, 60)
    assert reminded(reg) == []
    # Nor for a question that times out before its reminders come.
    reg.ask("s2", "alice", QS, remind=(600.0, 3), timeout=700)
    tick(reg, clock, 600)
    assert [k for _, k, _, _ in reminded(reg)] == [1]
    tick(reg, clock, 600)  # reminder 2 (1,200 s) is past the end (700 s)
    assert reminded(reg) == []
    assert not reg.get("s2", "r2").pending  # type: ignore[union-attr]


def test_a_reminder_due_at_the_end_is_not_sent(clock: FakeClock) -> None:
    reg = registry(clock)
    reg.ask("s1", "alice", QS, remind=(300.0, 3), timeout=600)
    tick(reg, clock, 300)
    assert [k for _, k, _, _ in reminded(reg)] == [1]
    tick(reg, clock, 300)  # 600 s: the timeout, not reminder 2
    assert reminded(reg) == []


def test_members_with_a_tab_are_not_reminded(clock: FakeClock) -> None:
    reg = registry(clock)
    reg.connect("c1", "bob")
    reg.ask("s1", "", QS, to=("alice", "bob", "carol"), remind=(60.0, 2))
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 1, ["alice", "bob", "carol"], ["alice", "carol"])]
    reg.connect("c2", "alice")
    reg.connect("c3", "carol")
    tick(reg, clock, 60)
    assert reminded(reg) == []  # everyone has a tab: nothing to send
    assert reg.next_deadline() == clock.now + 780  # and the reminders are over


def test_a_group_is_resolved_when_the_reminder_comes(clock: FakeClock) -> None:
    from askd.core.changes import GroupSet

    reg = registry(clock)
    reg.apply(GroupSet("ops", ("alice",)))
    reg.ask("s1", "", QS, to=("group:ops",), remind=(60.0, 2))
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 1, ["alice"], ["alice"])]
    reg.apply(GroupSet("ops", ("alice", "bob")))
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 2, ["alice", "bob"], ["alice", "bob"])]


def test_an_extension_moves_the_end_but_never_adds_reminders_beyond_times(clock: FakeClock) -> None:
    reg = registry(clock)
    t0 = clock.now
    reg.ask("s1", "alice", QS, remind=(100.0, 3), timeout=250, max_extension=600)
    tick(reg, clock, 100)
    tick(reg, clock, 100)
    assert [k for _, k, _, _ in reminded(reg)] == [1, 2]
    assert reg.next_deadline() == t0 + 250  # reminder 3 (300 s) is past the end
    reg.apply(reg.prepare_extend("s1", "r1", 600, user_id="alice"))  # ends at 850 s now
    tick(reg, clock, 100)
    assert [k for _, k, _, _ in reminded(reg)] == [3]  # now before the end
    for _ in range(6):
        tick(reg, clock, 100)
    assert reminded(reg) == []  # three times in all, however long it waits
    assert not reg.get("s1", "r1").pending  # type: ignore[union-attr]


def test_an_extension_of_a_question_whose_next_reminder_was_due_anyway_sends_it_once(clock: FakeClock) -> None:
    reg = registry(clock)
    reg.ask("s1", "alice", QS, remind=(100.0, 2), timeout=900, max_extension=600)
    reg.apply(reg.prepare_extend("s1", "r1", 60, user_id="alice"))  # a second entry for reminder 1
    tick(reg, clock, 100)
    assert [k for _, k, _, _ in reminded(reg)] == [1]
    tick(reg, clock, 100)
    assert [k for _, k, _, _ in reminded(reg)] == [2]


def test_a_restart_sends_at_most_the_latest_missed_reminder(clock: FakeClock) -> None:
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, remind=(60.0, 5))
    tick(reg, clock, 60)
    assert [k for _, k, _, _ in reminded(reg)] == [1]
    clock.advance(150)  # askd was down through reminders 2 (120 s) and 3 (180 s)
    back = registry(clock)
    back.restore(kept(req))
    back.advance()
    assert reminded(back) == [("r1", 3, ["alice"], ["alice"])]  # the latest one, once
    tick(back, clock, 29.9)
    assert reminded(back) == []
    tick(back, clock, 0.1)
    assert [k for _, k, _, _ in reminded(back)] == [4]  # then on time


def test_a_restart_before_the_first_reminder_or_after_the_last_sends_none_early(clock: FakeClock) -> None:
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, remind=(60.0, 2))
    clock.advance(30)
    back = registry(clock)
    back.restore(kept(req))
    back.advance()
    assert reminded(back) == []
    tick(back, clock, 30)
    assert [k for _, k, _, _ in reminded(back)] == [1]
    clock.advance(300)  # down past both
    again = registry(clock)
    again.restore(kept(req))
    again.advance()
    assert [k for _, k, _, _ in reminded(again)] == [2]  # the latest (a sent one's claim keeps it from going twice)
    tick(again, clock, 300)
    assert reminded(again) == []


def test_a_restored_ended_question_sends_none(clock: FakeClock) -> None:
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, remind=(60.0, 2))
    reg.withdraw("s1", "r1")
    clock.advance(130)
    back = registry(clock)
    back.restore(kept(req))
    back.advance()
    assert reminded(back) == []


def test_an_away_user_is_not_reminded_their_delegates_are(clock: FakeClock) -> None:
    from askd.core.changes import AwaySet

    reg = registry(clock)
    reg.apply(AwaySet("alice", clock.now + 3600, ("bob",)))
    reg.ask("s1", "alice", QS, remind=(60.0, 1))
    tick(reg, clock, 60)
    assert reminded(reg) == [("r1", 1, ["bob"], ["bob"])]
