"""Agents kept apart, in the core: a session is the agent's that first
asked in it; an agent token with a ``sub`` finds every other agent's session
unknown, and its Idempotency-Keys are its own. A token without a ``sub``
(``agent`` None) reaches every session."""

from __future__ import annotations

from typing import Any

import pytest

from askd.core import AskInput, NotFound
from tests.support.registry_steps import StepRegistry

Q: list[dict[str, Any]] = [{"question": "Go?", "header": "Go", "options": [{"label": "Yes"}, {"label": "No"}]}]


@pytest.fixture
def reg() -> StepRegistry:
    return StepRegistry()


def test_a_session_is_the_agent_s_that_first_asked(reg: StepRegistry) -> None:
    reg.ask("s", "alice", Q, agent="A")
    assert reg.reaches("s", "A") and not reg.reaches("s", "B")
    assert reg.reaches("s", None)  # a token without a sub reaches it
    assert reg.reaches("unknown", "B")  # a new session is anyone's to ask in


def test_another_agent_s_ask_is_not_found_not_an_owner_mismatch(reg: StepRegistry) -> None:
    reg.ask("s", "alice", Q, agent="A")
    # Another user too: 404, so B learns nothing of who owns it.
    for user in ("alice", "bob"):
        with pytest.raises(NotFound):
            reg.ask("s", user, Q, agent="B")
    assert len(reg.pending("s")) == 1


def test_a_parent_of_another_agent_is_not_found(reg: StepRegistry) -> None:
    reg.ask("root", "alice", Q, agent="A")
    with pytest.raises(NotFound):
        reg.ask("child", "alice", Q, agent="B", parent_session_id="root")
    assert reg.owner("child") is None


def test_a_parent_an_ask_names_is_that_agent_s(reg: StepRegistry) -> None:
    reg.ask("child", "alice", Q, agent="A", parent_session_id="root")
    assert reg.reaches("root", "A") and not reg.reaches("root", "B")


def test_withdraw_and_cancel_of_another_agent_change_nothing(reg: StepRegistry) -> None:
    req, _ = reg.ask("s", "alice", Q, agent="A")
    assert reg.withdraw("s", req.request_id, agent="B") is None  # as if unknown
    with pytest.raises(NotFound):
        reg.cancel_session("s", agent="B")
    assert req.pending
    assert reg.cancel_session("s", agent="A") == 1


def test_a_sub_less_session_is_not_a_sub_s(reg: StepRegistry) -> None:
    """A session a token without a sub asked in first (or one kept from
    before askd recorded agents) is no agent's own: only tokens without a
    sub reach it."""
    reg.ask("s", "alice", Q)
    assert not reg.reaches("s", "A")
    reg.ask("s", "alice", Q)  # the sub-less agent still asks there


def test_idempotency_keys_are_per_agent(reg: StepRegistry) -> None:
    first, new = reg.ask("s", "alice", Q, agent="A", idempotency_key="k")
    again, replayed_new = reg.ask("s", "alice", Q, agent="A", idempotency_key="k")
    assert new and not replayed_new and again is first
    # The sub-less agent reaches the session, but the key is not its own.
    other, other_new = reg.ask("s", "alice", Q, idempotency_key="k")
    assert other_new and other is not first
    # Each replays its own.
    assert reg.ask("s", "alice", Q, idempotency_key="k")[0] is other
    assert reg.ask("s", "alice", Q, agent="A", idempotency_key="k")[0] is first


def test_an_ask_in_flight_reserves_its_session_for_its_agent(reg: StepRegistry) -> None:
    """Two asks decided in one batch (before either is stored): the second,
    by another agent in the same new session, is refused as the stored one
    would be."""
    reg.prepare_ask(AskInput("s", "alice", Q, agent="A"))
    with pytest.raises(NotFound):
        reg.prepare_ask(AskInput("s", "alice", Q, agent="B"))
    reg.prepare_ask(AskInput("s", "alice", Q, agent="A"))


def test_restore_keeps_the_session_s_agent(reg: StepRegistry) -> None:
    fresh = StepRegistry()
    # A child restored before its parent: the parent gets its own agent when loaded.
    fresh.restore_session("child", "alice", "root", "A")
    fresh.restore_session("root", "alice", None, "B")
    assert fresh.reaches("child", "A") and fresh.reaches("root", "B") and not fresh.reaches("root", "A")
