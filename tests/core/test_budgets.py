"""Budgets per agent (issue 29 item 10): one agent token cannot fill askd,
or a person's inbox, alone; the others still ask. With a fake clock."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from askd.core import AskInput, Limits, TooManyPending
from tests.core.test_registry import FakeClock
from tests.support.registry_steps import StepRegistry

BIG = [{"question": "Big?", "description": "x" * 10_000}]  # a frame of about 10.2 KB


def registry(**limits: Any) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(Limits(**limits), clock=FakeClock(), new_id=lambda: f"r{next(ids)}")


def test_one_agent_at_its_question_cap_leaves_room_for_the_others() -> None:
    reg = registry(max_pending_total=10, max_pending_per_agent=3)
    for i in range(3):
        reg.ask(f"a{i}", f"user{i}", BIG, agent="A")
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        reg.ask("a9", "user9", BIG, agent="A")
    reg.ask("b1", "user1", BIG, agent="B")  # another agent still asks
    reg.ask("n1", "user1", BIG)  # and so do tokens without a sub: one agent of their own
    reg.withdraw("a0", "r1", agent="A")  # an end frees A's slot
    reg.ask("a9", "user9", BIG, agent="A")


def test_tokens_without_a_sub_count_as_one_agent() -> None:
    reg = registry(max_pending_per_agent=2)
    reg.ask("s1", "alice", BIG)
    reg.ask("s2", "bob", BIG)
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        reg.ask("s3", "carol", BIG)
    reg.ask("s3", "carol", BIG, agent="A")


def test_one_agent_fills_only_its_share_of_a_users_bytes() -> None:
    reg = registry(max_pending_bytes_per_user=100_000, max_user_share_per_agent=0.5)
    for i in range(4):  # 4 x 10.2 KB: within A's 50,000
        reg.ask(f"a{i}", "alice", BIG, agent="A")
    with pytest.raises(TooManyPending, match="share of the user's budget"):
        reg.ask("a9", "alice", BIG, agent="A")
    reg.ask("a9", "bob", BIG, agent="A")  # a share per user: bob's is A's too
    for i in range(4):
        reg.ask(f"b{i}", "alice", BIG, agent="B")  # the other agent still reaches alice
    reg.ask("n1", "alice", BIG)  # 9 x 10.2 KB: alice's 100,000 is nearly full
    with pytest.raises(TooManyPending, match="bytes of pending questions \\(limit"):
        reg.ask("n2", "alice", BIG)  # the user's own budget still holds for all agents


def test_one_agent_at_its_byte_cap_and_askd_at_its_total() -> None:
    reg = registry(max_pending_bytes_per_agent=25_000, max_pending_bytes_total=55_000)
    reg.ask("a1", "u1", BIG, agent="A")
    reg.ask("a2", "u2", BIG, agent="A")
    with pytest.raises(TooManyPending, match="this agent already has .* bytes of pending questions \\(limit 25000\\)"):
        reg.ask("a3", "u3", BIG, agent="A")
    reg.ask("b1", "u3", BIG, agent="B")
    reg.ask("b2", "u4", BIG, agent="B")
    reg.ask("c1", "u5", BIG, agent="C")  # 5 x 10.2 KB in all
    with pytest.raises(TooManyPending, match="askd holds .* bytes"):
        reg.ask("c2", "u6", BIG, agent="C")


def test_asks_in_flight_count_against_their_agent_until_applied_or_released() -> None:
    reg = registry(max_pending_per_agent=2)
    _, first = reg.prepare_ask(AskInput("s1", "alice", BIG, agent="A"))
    _, second = reg.prepare_ask(AskInput("s2", "alice", BIG, agent="A"))
    assert first is not None and second is not None
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        reg.prepare_ask(AskInput("s3", "alice", BIG, agent="A"))
    reg.release(first)
    reg.apply(second)
    _, third = reg.prepare_ask(AskInput("s3", "alice", BIG, agent="A"))
    assert third is not None
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        reg.prepare_ask(AskInput("s4", "alice", BIG, agent="A"))


def test_restored_questions_count_against_their_agent() -> None:
    """After a restart the store's questions hold their agent's budget again."""
    limits = {"max_pending_per_agent": 2, "max_pending_bytes_per_user": 100_000, "max_user_share_per_agent": 0.5}
    before = registry(**limits)
    kept = [before.ask(f"s{i}", "alice", BIG, agent="A")[0] for i in range(2)]
    after = registry(**limits)
    for req in kept:
        after.restore_session(req.session_id, req.user_id, None, "A")
        after.restore(req)
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        after.ask("s9", "bob", BIG, agent="A")
    after.ask("s9", "bob", BIG, agent="B")
    after.withdraw("s0", kept[0].request_id, agent="A")  # ending a restored one frees its slot
    after.ask("s8", "bob", BIG, agent="A")


def test_another_nodes_questions_count_and_a_refused_commit_frees_its_reservation() -> None:
    """On a shared store a node applies other nodes' asks too (its replica):
    they count against their agent there; an ask whose commit was refused
    (or applied twice) is counted once or not at all."""
    here, there = registry(max_pending_per_agent=2), registry(max_pending_per_agent=2)
    for session in ("s1", "s2"):
        _, change = there.prepare_ask(AskInput(session, "alice", BIG, agent="A"))
        assert change is not None
        there.apply(change)
        assert here.apply(change) and not here.apply(change)  # the stream may repeat it
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        here.prepare_ask(AskInput("s3", "alice", BIG, agent="A"))
    assert here.stats()["pending"] == 2
    here.prepare_ask(AskInput("s3", "alice", BIG, agent="B"))
    _, refused = here.prepare_ask(AskInput("s4", "alice", BIG, agent="B"))
    assert refused is not None and here.stats()["pending"] == 2  # in flight is not pending
    with pytest.raises(TooManyPending, match="max_pending_per_agent"):
        here.prepare_ask(AskInput("s5", "alice", BIG, agent="B"))
    here.release(refused)
    here.prepare_ask(AskInput("s5", "alice", BIG, agent="B"))
