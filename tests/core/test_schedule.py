"""The schedule of named deadlines on its own: many kinds in one heap, ties,
stale entries, and a registry's deadlines restored from what a store keeps."""

from __future__ import annotations

import itertools

from askd.core import Limits, NotifyPolicy
from askd.core.deadlines import DEADLINE_KINDS
from askd.core.schedule import COMPACT_MIN, Schedule
from tests.core.test_registry import QS, FakeClock
from tests.registry_steps import StepRegistry


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
    pending, _ = before.ask("s1", "alice", QS, escalate=((300.0, ("bob",)),))
    ended, _ = before.ask("s1", "alice", QS, timeout=30)
    before.answer("s1", ended.request_id, {"Which database?": "x"})
    expected = sorted((e[0], e[2], e[3].request_id) for e in before.schedule._heap if e[3].pending or e[2] == "forget")

    after = StepRegistry(limits, clock=clock, notify=policy)
    after.restore_session("s1", "alice", None)
    for req in (pending, ended):
        after.restore(req)
    assert sorted((e[0], e[2], e[3].request_id) for e in after.schedule._heap) == expected
    assert {kind for _, kind, _ in expected} == {k.name for k in DEADLINE_KINDS}
