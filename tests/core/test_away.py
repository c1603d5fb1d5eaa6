"""Spec R in the core, with a fake clock: away, with delegates. The
delegates join the away user's questions live and leave them (``reassigned``)
when the away ends, at ``until``, by the admin, or at a restart past it."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from askd.core import InvalidRequest, Limits, NotFound, NotifyPolicy
from askd.core.changes import AwayEnded, AwaySet
from askd.core.snapshot import Loaded, restore
from tests.core.test_registry import FakeClock
from tests.support.registry_steps import StepRegistry

QS = [{"question": "Deploy?"}]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make(clock: FakeClock, **kw: Any) -> StepRegistry:
    ids = itertools.count(1)
    r = StepRegistry(Limits(question_timeout=9000), clock=clock, new_id=lambda: f"r{next(ids)}", **kw)
    r.apply(r.prepare_group_set("ops", ["dave", "erin"]))
    return r


@pytest.fixture
def reg(clock: FakeClock) -> StepRegistry:
    r = make(clock)
    for u in ("alice", "bob", "carol", "dave"):
        r.connect(f"c-{u}", u)
    return r


def sent(reg: StepRegistry) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    out = []
    for s in reg.drain().sends:
        frame = json.loads(s.event.frame)
        out.append((s.to, frame["type"], frame["payload"]))
    return out


def away(reg: StepRegistry, user: str, seconds: float, *delegates: str) -> None:
    assert reg.apply(reg.prepare_away(user, reg._clock() + seconds, delegates))


def test_a_pending_question_joins_the_delegates_tabs_when_the_away_starts(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    sent(reg)
    away(reg, "alice", 3600, "bob", "group:ops")
    [(to, kind, payload)] = sent(reg)
    assert (sorted(to), kind, payload["requestId"]) == (["c-bob", "c-dave"], "ask_user_questions", req.request_id)
    assert {r.request_id for r in reg.pending(user_id="bob")} == {req.request_id}
    assert reg.audiences.of(req) == {"alice", "bob", "dave", "erin"}
    # a new question of hers goes to them too
    new, _ = reg.ask("s1", "alice", QS)
    [(to, kind, _)] = sent(reg)
    assert sorted(to) == ["c-alice", "c-bob", "c-dave"] and kind == "ask_user_questions"
    # and the delegate may subscribe to her session: the replay holds them
    reg.subscribe("c-bob", "s1")
    frames = sent(reg)
    assert [p.get("requestId") for _, k, p in frames if k == "ask_user_questions"] == [req.request_id, new.request_id]


def test_the_delegates_leave_with_reassigned_at_until(reg: StepRegistry, clock: FakeClock) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    sent(reg)
    assert reg.next_deadline() == clock.now + 600
    clock.advance(599)
    assert reg.due() == []
    clock.advance(1)
    changes = reg.due()
    assert changes == [AwayEnded("alice", clock.now)]
    assert reg.apply(changes[0])
    [(to, kind, payload)] = sent(reg)
    assert (to, kind, payload) == (("c-bob",), "ask_user_questions_cancelled", {"requestId": req.request_id, "reason": "reassigned"})
    assert reg.away("alice") is None and req.request_id not in reg.audiences.team  # back on the fast path
    assert reg.audiences.of(req) == {"alice"}
    # the question goes on for her
    reg.answer("s1", req.request_id, {"Deploy?": "y"}, user_id="alice")
    [(to, kind, payload)] = sent(reg)
    assert to == ("c-alice",) and payload["reason"] == "answered" and "onBehalfOf" not in payload


def test_the_admin_ends_an_away_and_an_old_deadline_ends_no_newer_one(reg: StepRegistry, clock: FakeClock) -> None:
    reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    sent(reg)
    reg.apply(reg.prepare_back("alice"))
    [(to, kind, payload)] = sent(reg)
    assert to == ("c-bob",) and payload["reason"] == "reassigned"
    with pytest.raises(NotFound):
        reg.prepare_back("alice")
    # set again with a later until: the first deadline no longer counts
    away(reg, "alice", 1200, "carol")
    clock.advance(600)
    assert reg.due() == []
    # an end decided for another until does not take
    assert not reg.apply(AwayEnded("alice", clock.now))
    clock.advance(600)
    assert reg.due() == [AwayEnded("alice", clock.now)]


def test_changing_the_delegates_moves_the_question(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    sent(reg)
    away(reg, "alice", 600, "carol")
    frames = sorted((to, kind) for to, kind, _ in sent(reg))
    assert frames == [(("c-bob",), "ask_user_questions_cancelled"), (("c-carol",), "ask_user_questions")]


def test_a_delegate_answers_on_behalf_of_the_away_user(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "group:ops")
    sent(reg)
    ended = reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="dave")
    assert ended.on_behalf_of == "alice"
    reg.apply(ended)
    [(to, _, payload)] = sent(reg)
    assert sorted(to) == ["c-alice", "c-dave"]
    assert (payload["answeredBy"], payload["onBehalfOf"]) == ("dave", "alice")
    result = req.result()
    assert (result["answeredBy"], result["onBehalfOf"]) == ("dave", "alice")


def test_a_delegate_declines_on_behalf_and_a_non_delegate_cannot_answer(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    with pytest.raises(Exception):
        reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="carol")
    ended = reg.prepare_decline("s1", req.request_id, "no", user_id="bob")
    assert ended.on_behalf_of == "alice"


def test_the_away_user_still_answers_as_themself(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    ended = reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="alice")
    assert ended.on_behalf_of is None
    reg.apply(ended)
    assert "onBehalfOf" not in req.result()


def test_a_delegate_asked_on_their_own_answers_as_themself(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "", QS, to=("alice", "bob"))
    away(reg, "alice", 600, "bob", "carol")
    assert reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="bob").on_behalf_of is None
    assert reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="carol").on_behalf_of == "alice"
    assert reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}).on_behalf_of is None  # an admin


def test_a_delegate_group_follows_its_members_live(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "group:ops")
    sent(reg)
    reg.apply(reg.prepare_group_set("ops", ["erin", "carol"]))
    frames = sorted((to, kind) for to, kind, _ in sent(reg))
    assert frames == [(("c-carol",), "ask_user_questions"), (("c-dave",), "ask_user_questions_cancelled")]


def test_a_team_question_holding_the_away_user_reaches_the_delegates(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "", QS, to=("group:ops", "alice"))
    sent(reg)
    away(reg, "alice", 600, "bob")
    [(to, kind, _)] = sent(reg)
    assert (to, kind) == (("c-bob",), "ask_user_questions")
    other, _ = reg.ask("s2", "carol", QS)  # not hers: nobody else gets it
    [(to, _, _)] = sent(reg)
    assert to == ("c-carol",)


def test_delegation_is_one_level(reg: StepRegistry) -> None:
    req, _ = reg.ask("s1", "alice", QS)
    away(reg, "alice", 600, "bob")
    away(reg, "bob", 600, "carol")
    assert reg.audiences.of(req) == {"alice", "bob"}


def test_notifications_skip_the_away_user(clock: FakeClock) -> None:
    reg = make(clock, notify=NotifyPolicy())
    away(reg, "alice", 600, "bob", "group:ops")
    req, _ = reg.ask("s1", "alice", QS)
    assert reg.audiences.notify_users(req) == (["bob", "dave", "erin"], ["bob", "dave", "erin"])
    reg.apply(reg.prepare_back("alice"))
    assert reg.audiences.notify_users(req) == (["alice"], ["alice"])


def test_an_away_is_checked(reg: StepRegistry, clock: FakeClock) -> None:
    for until, delegates, loc in (
        (clock.now - 1, ["bob"], "until"),
        (clock.now + 60, [], "delegates"),
        (clock.now + 60, ["bob", "alice"], "delegates.1"),
        (clock.now + 60, ["group:nope"], "delegates.0"),
    ):
        with pytest.raises(InvalidRequest) as err:
            reg.prepare_away("alice", until, delegates)
        assert err.value.details[0]["loc"] == loc
    assert reg.prepare_away("alice", clock.now + 60, ["bob", "bob"]) == AwaySet("alice", clock.now + 60, ("bob",))


def test_a_restart_past_until_ends_the_away_at_start(clock: FakeClock) -> None:
    before = make(clock)
    req, _ = before.ask("s1", "alice", QS)
    until = clock.now + 600
    loaded = Loaded(groups={"ops": ["dave", "erin"]}, aways={"alice": (until, ["bob"])})
    loaded.sessions = []
    after = make(clock)
    after.restore_session("s1", "alice", None)
    restore(loaded, after)
    after.restore(req)
    assert after.audiences.of(req) == {"alice", "bob"}
    clock.advance(601)
    after.connect("c-bob", "bob")
    assert after.next_deadline() is not None and after.next_deadline() <= until
    changes = after.due()
    assert AwayEnded("alice", until) in changes
    for c in changes:
        after.apply(c)
    assert after.away("alice") is None and after.audiences.of(req) == {"alice"}


def test_taking_and_apply_agree_on_aways(reg: StepRegistry, clock: FakeClock) -> None:
    batch = [AwaySet("alice", clock.now + 60, ("bob",)), AwayEnded("alice", clock.now + 30), AwayEnded("alice"), AwayEnded("alice")]
    taken = reg.taking(batch)
    assert taken == [batch[0], batch[2]]
    assert [reg.apply(c) for c in batch] == [True, False, True, False]
