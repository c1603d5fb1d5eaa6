"""Which change yields which audit record (protocol section P), decided by
the core's own changes: an escalation names the entries it added; an
extension who asked for it; answers never appear."""

from __future__ import annotations

import itertools

from askd.audit.records import bodies
from askd.core import AskInput, Limits, NotifyPolicy
from askd.core.changes import Forgot, GroupSet, Notified
from tests.core.test_registry import FakeClock
from tests.support.registry_steps import StepRegistry

QS = [{"question": "Deploy?"}]


def registry(clock: FakeClock) -> StepRegistry:
    ids = itertools.count(1)
    r = StepRegistry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"r{next(ids)}", notify=NotifyPolicy())
    r.apply(r.prepare_group_set("leads", ["dave"]))
    return r


def test_an_escalation_records_its_step_and_the_users_it_added() -> None:
    clock = FakeClock()
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, escalate=((300.0, ("group:leads",)), (600.0, ("erin",))))
    clock.advance(300)
    [step] = reg.due()
    [rec] = bodies(step, 0.0)
    assert (rec["event"], rec["by"], rec["via"], rec["data"]) == ("escalated", None, None, {"step": 1, "added": ["dave"]})


def test_a_step_adds_its_groups_as_they_are_then_and_repeats_nobody() -> None:
    clock = FakeClock()
    reg = registry(clock)
    steps = ((300.0, ("group:leads", "alice")), (600.0, ("dave", "group:leads", "erin")))
    req, _ = reg.ask("s1", "alice", QS, escalate=steps)
    reg.apply(reg.prepare_group_set("leads", ["dave", "frank"]))  # after the ask, before the step
    clock.advance(300)
    [step] = reg.due()
    reg.apply(step)
    assert step.added == ("dave", "frank")  # alice is asked already
    reg.apply(reg.prepare_group_set("leads", ["dave", "frank", "gus"]))
    clock.advance(300)
    [step] = reg.due()
    # gus joined a group the audience holds already: he was asked then, not by this step
    assert bodies(step, 0.0)[0]["data"] == {"step": 2, "added": ["erin"]}


def test_an_ask_through_askd_mcp_is_recorded_so() -> None:
    reg = registry(FakeClock())
    _, asked = reg.prepare_ask(AskInput("s1", "alice", QS, agent="bot", via="mcp"))
    assert asked is not None
    [rec] = bodies(asked, 0.0)
    assert (rec["event"], rec["by"], rec["via"]) == ("asked", "bot", "mcp")
    _, asked = reg.prepare_ask(AskInput("s2", "alice", QS, agent="bot"))
    assert asked is not None and bodies(asked, 0.0)[0]["via"] == "agent"


def test_an_agents_withdraw_and_cancel_name_it_and_agent() -> None:
    reg = registry(FakeClock())
    req, _ = reg.ask("s1", "alice", QS, agent="bot")
    other, _ = reg.ask("s1", "alice", [{"question": "Other?"}], agent="bot")
    _, ended = reg.prepare_withdraw("s1", req.request_id, "bot")
    assert ended is not None
    assert [(r["event"], r["by"], r["via"]) for r in bodies(ended, 0.0)] == [("withdrawn", "bot", "agent")]
    reg.apply(ended)
    [ended] = reg.prepare_cancel("s1", "bot")
    assert [(r["event"], r["by"], r["via"]) for r in bodies(ended, 0.0)] == [("cancelled", "bot", "agent")]


def test_an_extension_records_who_and_how_much() -> None:
    clock = FakeClock()
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS, max_extension=60.0)
    [rec] = bodies(reg.prepare_extend("s1", req.request_id, 30, user_id="alice"), 0.0)
    assert (rec["event"], rec["by"], rec["via"], rec["data"]["seconds"]) == ("extended", "alice", "ws", 30)
    [rec] = bodies(reg.prepare_extend("s1", req.request_id, 30, agent="bot"), 0.0)
    assert (rec["by"], rec["via"]) == ("bot", "agent")


def test_an_answer_records_its_digest_not_its_text() -> None:
    clock = FakeClock()
    reg = registry(clock)
    req, _ = reg.ask("s1", "alice", QS)
    ended = reg.prepare_answer("s1", req.request_id, {"Deploy?": "a secret"}, user_id="alice", via="ws")
    [rec] = bodies(ended, 0.0)
    assert rec["data"] == {"digest": ended.digest, "defaulted": False} and ended.digest
    assert "a secret" not in repr(rec)


def test_changes_the_trail_does_not_keep() -> None:
    for change in (Forgot("s1", "r1"), Notified("s1", "r1"), GroupSet("g", ("a",))):
        assert bodies(change, 0.0) == []
