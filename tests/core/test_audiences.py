"""Spec G and H in the core, with a fake clock: questions asked of a team,
audiences that follow the groups live, and escalation steps taken once."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from askd.core import AskInput, Forbidden, InvalidRequest, Limits, NotifyPolicy, NotPending, SessionOwnerMismatch, UserOffline
from askd.protocol import codec
from askd.core.changes import Escalated
from tests.core.test_registry import FakeClock
from tests.support.registry_steps import StepRegistry

QS = [{"question": "Deploy?"}]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def reg(clock: FakeClock) -> StepRegistry:
    ids = itertools.count(1)
    r = StepRegistry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"r{next(ids)}", notify=NotifyPolicy())
    r.apply(r.prepare_group_set("oncall", ["bob", "carol"]))
    r.apply(r.prepare_group_set("leads", ["dave"]))
    return r


def sent(reg: StepRegistry) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    out = []
    for s in reg.drain().sends:
        frame = json.loads(s.event.frame)
        out.append((s.to, frame["type"], frame["payload"]))
    return out


def tabs(reg: StepRegistry, *users: str) -> None:
    for u in users:
        reg.connect(f"c-{u}", u)


def test_a_team_question_goes_to_every_member_and_any_member_answers(reg: StepRegistry) -> None:
    tabs(reg, "alice", "bob", "carol", "erin")
    req, _ = reg.ask("s1", "", QS, to=("group:oncall", "alice"))
    [(to, kind, payload)] = sent(reg)
    assert (sorted(to), kind, payload["requestId"]) == (["c-alice", "c-bob", "c-carol"], "ask_user_questions", req.request_id)
    desc = req.describe()
    assert desc["to"] == ["alice", "group:oncall"] and "userId" not in desc
    with pytest.raises(NotPending):
        reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="erin")
    reg.answer("s1", req.request_id, {"Deploy?": "y"}, user_id="carol")
    [(to, kind, payload)] = sent(reg)
    assert (sorted(to), kind, payload["reason"]) == (["c-alice", "c-bob", "c-carol"], "ask_user_questions_cancelled", "answered")


def test_one_user_by_to_is_the_same_as_user_id(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "", QS, to=("alice",))
    assert req.user_id == "alice" and req.describe()["userId"] == "alice" and req.describe()["to"] == ["alice"]
    reg.ask("s1", "alice", QS)  # the same audience: the same session owner


def test_the_session_audience_is_compared_as_a_set(reg: StepRegistry) -> None:
    reg.ask("s1", "", QS, to=("group:oncall", "alice"))
    reg.ask("s1", "", QS, to=("alice", "group:oncall", "alice"))  # order and repeats ignored
    for other in (("alice",), ("group:oncall",), ("group:oncall", "alice", "bob")):
        with pytest.raises(SessionOwnerMismatch):
            reg.prepare_ask(_ask("s1", to=other))


def _ask(session: str, **kw: Any) -> AskInput:
    return AskInput(session, "", QS, **kw)


def test_an_unknown_group_is_refused_at_its_entry(reg: StepRegistry) -> None:
    with pytest.raises(InvalidRequest) as err:
        reg.prepare_ask(_ask("s1", to=("alice", "group:nope")))
    assert err.value.details == [{"loc": "to.1", "msg": "no group 'nope'"}]
    with pytest.raises(InvalidRequest) as err:
        reg.prepare_ask(_ask("s1", to=("alice",), escalate=((60.0, ("bob", "group:nope")),)))
    assert err.value.details[0]["loc"] == "escalate.0.to.1"
    with pytest.raises(InvalidRequest) as err:
        reg.prepare_ask(_ask("s1", to=("alice",), timeout=60, escalate=((60.0, ("bob",)),)))
    assert err.value.details[0]["loc"] == "escalate.0.afterSeconds"


def test_require_online_holds_when_any_member_has_a_connection(reg: StepRegistry) -> None:
    with pytest.raises(UserOffline):
        reg.prepare_ask(_ask("s1", to=("group:oncall",), require_online=True))
    tabs(reg, "carol")
    reg.ask("s1", "", QS, to=("group:oncall",), require_online=True)


def test_the_audience_follows_the_group_live(reg: StepRegistry) -> None:
    tabs(reg, "bob", "carol", "frank")
    req, _ = reg.ask("s1", "", QS, to=("group:oncall",))
    sent(reg)
    reg.apply(reg.prepare_group_set("oncall", ["carol", "frank"]))
    got = sent(reg)
    assert [(to, kind) for to, kind, _ in got] == [(("c-frank",), "ask_user_questions"), (("c-bob",), "ask_user_questions_cancelled")]
    assert got[1][2] == {"requestId": req.request_id, "reason": "reassigned"}
    with pytest.raises(NotPending):
        reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="bob")
    # a member added later sees it on subscribe, to * or to the session; a removed one may not subscribe
    assert reg.subscribe("c-frank", "*") == 1
    with pytest.raises(Forbidden):
        reg.subscribe("c-bob", "s1")
    assert [r.request_id for r in reg.pending(user_id="frank")] == [req.request_id]
    assert reg.pending(user_id="bob") == []
    reg.apply(reg.prepare_group_delete("oncall"))
    assert {to for to, kind, _ in sent(reg) if kind == "ask_user_questions_cancelled"} == {("c-carol", "c-frank")}


@pytest.mark.parametrize("metadata", [None, {"ticket": 2**70 + 1, "note": "naïve \ud800"}])
def test_a_team_questions_push_is_its_kept_frame_with_what_changed_added(reg: StepRegistry, metadata: Any) -> None:
    # The push adds to, steps and allowance to the kept bytes: the same bytes
    # as the kept frame decoded, its payload updated and encoded again.
    req, _ = reg.ask("s1", "", QS, to=("group:oncall", "alice"), escalate=((300.0, ("erin",)),),
                     max_extension=600.0, metadata=metadata)
    assert req.frame is not None
    kept = codec.loads(req.frame)
    kept["payload"].update(req.push_fields())
    assert req.ask_event().frame == codec.dumps(kept)
    assert json.loads(req.ask_event().frame)["payload"] == {
        **json.loads(req.frame)["payload"], "to": ["alice", "group:oncall"], "escalations": 0, "escalatedTo": [],
        "maxExtensionSeconds": 600, "extensionLeftSeconds": 600,
    }


def test_an_escalation_step_is_taken_once_at_its_time_and_notifies_again(reg: StepRegistry, clock: FakeClock) -> None:
    tabs(reg, "alice", "dave")
    req, _ = reg.ask("s1", "alice", QS, escalate=((300.0, ("group:leads",)), (600.0, ("erin",))))
    reg.drain()
    assert req.result()["escalations"] == 0
    clock.advance(299)
    assert reg.due() == []
    clock.advance(1)
    [step] = reg.due()
    assert step == Escalated("s1", req.request_id, 1)
    # a second node's clock deciding the same step: only one takes effect
    assert reg.taking([step, Escalated("s1", req.request_id, 1)]) == [step]
    assert reg.apply(step) and not reg.apply(step)
    out = reg.drain()
    frames = [(s.to, json.loads(s.event.frame)) for s in out.sends]
    assert [(to, f["type"]) for to, f in frames] == [
        (("c-dave",), "ask_user_questions"),  # the step's people get the question
        (("c-alice",), "ask_user_questions_escalated"),  # who had it hear whom it is asked of now
    ]
    step_news = {"to": ["alice", "group:leads"], "escalations": 1, "escalatedTo": ["group:leads"]}
    assert frames[0][1]["payload"].items() >= step_news.items()
    assert frames[1][1]["payload"] == {"requestId": req.request_id, **step_news}
    assert out.notify == [req]  # notified again, for the new audience
    assert reg.audiences.notify_users(req) == (["alice", "dave"], ["dave"])
    assert req.describe()["to"] == ["alice", "group:leads"] and "userId" not in req.describe()
    assert req.describe()["escalations"] == 1
    reg.answer("s1", req.request_id, {"Deploy?": "y"}, user_id="dave")
    clock.advance(600)
    assert not any(isinstance(c, Escalated) for c in reg.due())  # ended: no further step
    assert req.result()["escalations"] == 1
