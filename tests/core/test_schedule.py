"""The schedule of named deadlines on its own: many kinds in one heap, ties,
stale entries, and a registry's deadlines restored from what a store keeps."""

from __future__ import annotations

import itertools
import json

from askd.core import Limits, NotifyPolicy
from askd.core.registry.deadlines import DEADLINE_KINDS
from askd.core.registry.deadlines import COMPACT_MIN, Schedule
from tests.core.test_registry import QS, FakeClock
from tests.support.registry_steps import StepRegistry


def test_many_kinds_come_out_in_time_order_and_ties_in_the_order_added() -> None:
    s: Schedule[str] = Schedule(dict.fromkeys(("escalate", "timeout", "forget", "notify"), lambda key, at: True))
    s.add(30.0, "escalate", "r1")
    s.add(10.0, "timeout", "r2")
    s.add(20.0, "forget", "r3")
    s.add(20.0, "notify", "r4")  # the same instant: after r3, added first
    s.add(20.0, "timeout", "r1")
    assert s.next_at() == 10.0
    assert list(s.pop_due(25.0)) == [("timeout", "r2"), ("forget", "r3"), ("notify", "r4"), ("timeout", "r1")]
    assert s.next_at() == 30.0
    assert list(s.pop_due(29.9)) == []
    assert list(s.pop_due(30.0)) == [("escalate", "r1")]
    assert s.next_at() is None


def test_entries_that_no_longer_count_are_skipped_whatever_their_kind() -> None:
    dead = {("timeout", "r1"), ("escalate", "r2")}
    s: Schedule[str] = Schedule({kind: lambda key, at, kind=kind: (kind, key) not in dead for kind in ("timeout", "escalate")})
    for at, kind, key in ((1.0, "timeout", "r1"), (2.0, "escalate", "r2"), (3.0, "escalate", "r3")):
        s.add(at, kind, key)
    assert s.next_at() == 3.0  # the two dead ones at the top are dropped
    assert list(s.pop_due(10.0)) == [("escalate", "r3")]


def test_a_deadline_added_while_walking_comes_out_in_the_same_walk() -> None:
    s: Schedule[str] = Schedule({"timeout": lambda key, at: True, "forget": lambda key, at: True})
    s.add(1.0, "timeout", "r1")
    out = []
    for kind, key in s.pop_due(5.0):
        out.append((kind, key))
        if kind == "timeout":
            s.add(2.0, "forget", key)  # an end makes its retention due at once
    assert out == [("timeout", "r1"), ("forget", "r1")]


def test_the_heap_is_rebuilt_once_a_third_of_it_is_stale() -> None:
    live: set[int] = set(range(3 * COMPACT_MIN))
    s: Schedule[int] = Schedule({"timeout": lambda key, at: key in live})
    for key in sorted(live):
        s.add(1000.0 - key, "timeout", key)  # the newest at the top: nothing stale is on top
    for key in range(COMPACT_MIN, 2 * COMPACT_MIN + 1):  # COMPACT_MIN + 1 of them
        live.discard(key)
        s.stale()
    s.next_at()
    assert len(s) == len(live)


def test_a_registrys_deadlines_come_back_from_the_requests_a_store_kept() -> None:
    """Each kind reads its due time from the request's own fields: a restore
    schedules every kind again with no code of its own."""
    clock = FakeClock()
    ids = itertools.count(1)
    policy = NotifyPolicy(after=60)
    limits = Limits(question_timeout=900, result_ttl=600)
    before = StepRegistry(limits, clock=clock, new_id=lambda: f"r{next(ids)}", notify=policy)
    pending, _ = before.ask("s1", "alice", QS, escalate=((300.0, ("bob",)),), remind=(120.0, 2))
    ended, _ = before.ask("s1", "alice", QS, timeout=30)
    before.answer("s1", ended.request_id, {"Which database?": "x"})
    expected = sorted((at, kind, r.request_id) for at, kind, r in before.schedule.entries() if r.pending or kind == "forget")

    after = StepRegistry(limits, clock=clock, notify=policy)
    after.restore_session("s1", "alice", None)
    for req in (pending, ended):
        after.restore(req)
    assert sorted((at, kind, r.request_id) for at, kind, r in after.schedule.entries()) == expected
    assert {kind for _, kind, _ in expected} == {k.name for k in DEADLINE_KINDS}


def _timeout_order(reg: StepRegistry) -> list[str]:
    """The request ids of the ``cancelled`` frames the registry sent, in order."""
    out = []
    for send in reg.drain().sends:
        frame = json.loads(send.event.frame)
        if frame["type"] == "ask_user_questions_cancelled":
            out.append(frame["payload"]["requestId"])
    return out


def test_questions_due_at_once_time_out_in_the_order_asked_an_extended_one_too() -> None:
    """Issue 29 item 12 (found by the model test): r3, asked third with a
    shorter timeout, is extended onto the others' deadline; the four end in
    the order they were asked, not with r3 last for its entry being newer."""
    clock = FakeClock()
    ids = itertools.count(1)
    reg = StepRegistry(Limits(question_timeout=3.0, result_ttl=600), clock=clock, new_id=lambda: f"r{next(ids)}")
    reg.connect("c1", "alice")
    reg.subscribe("c1", "s1")
    for timeout in (None, None, 2.5, None):
        reg.ask("s1", "alice", QS, timeout=timeout)
    reg.apply(reg.prepare_extend("s1", "r3", 0.5))
    reg.drain()
    clock.advance(3.0)
    assert reg.next_deadline() == clock.now
    reg.advance()
    assert _timeout_order(reg) == ["r1", "r2", "r3", "r4"]


def test_restored_questions_due_at_once_time_out_in_the_order_they_were_asked() -> None:
    """A store restores questions in the order they were committed (asked):
    the same tie-break comes back, extended ones included."""
    clock = FakeClock()
    ids = itertools.count(1)
    limits = Limits(question_timeout=3.0, result_ttl=600)
    before = StepRegistry(limits, clock=clock, new_id=lambda: f"r{next(ids)}")
    kept = [before.ask("s1", "alice", QS, timeout=t)[0] for t in (2.5, None, None)]
    before.apply(before.prepare_extend("s1", "r1", 0.5))

    after = StepRegistry(limits, clock=clock)
    after.restore_session("s1", "alice", None)
    for req in kept:
        after.restore(req)
    after.connect("c1", "alice")
    after.subscribe("c1", "s1")
    after.drain()
    clock.advance(3.0)
    after.advance()
    assert _timeout_order(after) == ["r1", "r2", "r3"]
