"""Approvals in the core (protocol section 17): an approval is a change like
an answer. One short of the quorum is an ``Approved``, the last an
``Ended``; both take effect only against the count of approvals they were
decided with, so two decided at once never both count and no quorum is
skipped; a denial ends it whatever the quorum."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from askd.core import AlreadyVoted, InvalidRequest, NoSeat, NotPending
from askd.core.approvals import Vote
from askd.core.changes import Approved, Change, Ended
from askd.core.lifecycle import Status
from askd.core.registry.rules import takes
from askd.receipts.digest import approval_content, digest
from askd.protocol import codec
from tests.support.registry_steps import StepRegistry

NOW = 1_800_000_000.0
DEPLOY = {"name": "deploy", "arguments": {"env": "prod", "replicas": 3}}
SCHEMA = {
    "type": "object",
    "properties": {"env": {"enum": ["prod", "staging"]}, "replicas": {"type": "integer", "minimum": 1}},
    "required": ["env"],
}


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def fresh(clock: Clock | None = None) -> StepRegistry:
    ids = itertools.count(1)
    return StepRegistry(clock=clock or Clock(), new_id=lambda: f"r{next(ids)}")


def ask(reg: StepRegistry, quorum: int = 1, to: tuple[str, ...] = ("alice", "bob", "carol"), **action: Any) -> str:
    req, _ = reg.ask("s", "", None, to=to, action={**DEPLOY, **action}, quorum=quorum)
    return req.request_id


def test_an_approval_short_of_the_quorum_is_kept_and_the_last_ends_it_answered() -> None:
    reg = fresh()
    rid = ask(reg, quorum=2)
    first = reg.prepare_approve("s", rid, user_id="alice", scope="once")
    assert isinstance(first, Approved) and first.counted == 0
    assert reg.apply(first)
    req = reg.get("s", rid)
    assert req is not None and req.pending and req.approvals == 1
    assert req.push_fields()["approvals"] == [{"by": "alice", "via": "ws", "at": "2027-01-15T08:00:00.000Z"}]
    last = reg.prepare_approve("s", rid, user_id="bob", via="admin")
    assert isinstance(last, Ended) and last.counted == 1
    assert reg.apply(last)
    result = req.result()
    assert result["status"] == "answered" and result["approved"] is True
    assert (result["answeredBy"], result["via"]) == ("bob", "admin")
    assert [a["by"] for a in result["approvals"]] == ["alice", "bob"]
    assert (result["arguments"], result["edited"], result["scope"]) == (DEPLOY["arguments"], False, "once")
    assert req.digest == digest(approval_content(DEPLOY, "once"))


def test_two_approvals_decided_against_one_count_never_both_count() -> None:
    reg = fresh()
    rid = ask(reg, quorum=3)
    a, b = reg.prepare_approve("s", rid, user_id="alice"), reg.prepare_approve("s", rid, user_id="bob")
    assert reg.taking([a, b]) == [a]
    assert reg.apply(a) and not reg.apply(b)
    req = reg.get("s", rid)
    assert req is not None and req.approvals == 1
    # Decided again against what holds now, it counts.
    again = reg.prepare_approve("s", rid, user_id="bob")
    assert isinstance(again, Approved) and again.counted == 1 and reg.apply(again)
    assert req.approvals == 2 and req.pending


def test_two_approvals_for_the_last_slot_end_it_once() -> None:
    reg = fresh()
    rid = ask(reg, quorum=2)
    reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
    b, c = reg.prepare_approve("s", rid, user_id="bob"), reg.prepare_approve("s", rid, user_id="carol")
    assert isinstance(b, Ended) and isinstance(c, Ended)
    assert reg.taking([b, c]) == [b]
    assert reg.apply(b) and not reg.apply(c)
    req = reg.get("s", rid)
    assert req is not None and [v.by for v in req.approval.votes] == ["alice", "bob"]  # type: ignore[union-attr]
    with pytest.raises(NotPending):
        reg.prepare_approve("s", rid, user_id="carol")


def test_a_quorum_is_never_skipped_by_a_stale_last_approval() -> None:
    # An approval decided as the last against count 1 cannot end a question
    # whose count is 0 (the first approval was not taken after all).
    reg = fresh()
    rid = ask(reg, quorum=2)
    first = reg.prepare_approve("s", rid, user_id="alice")
    reg.apply(first)
    last = reg.prepare_approve("s", rid, user_id="bob")
    row = RowOf(Status.PENDING, 0)
    assert takes(last, RowOf(Status.PENDING, 1)) and not takes(last, row) and not takes(last, RowOf(Status.PENDING, 2))


@pytest.mark.parametrize("denial_first", [True, False])
def test_the_last_approval_and_a_denial_decided_at_once_one_wins(denial_first: bool) -> None:
    reg = fresh()
    rid = ask(reg, quorum=2)
    reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
    approve = reg.prepare_approve("s", rid, user_id="bob")
    deny = reg.prepare_decline("s", rid, "no", user_id="carol")
    batch: list[Change] = [deny, approve] if denial_first else [approve, deny]
    assert reg.taking(batch) == batch[:1]
    took = [c for c in batch if reg.apply(c)]
    assert took == batch[:1]
    result = reg.get("s", rid).result()  # type: ignore[union-attr]
    assert result["status"] == ("declined" if denial_first else "answered")
    assert result["approved"] is (not denial_first)


def test_one_denial_ends_it_whatever_the_quorum_and_an_approver_may_deny() -> None:
    reg = fresh()
    rid = ask(reg, quorum=3)
    reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
    reg.apply(reg.prepare_decline("s", rid, "changed my mind", user_id="alice"))
    req = reg.get("s", rid)
    assert req is not None
    result = req.result()
    assert (result["status"], result["approved"], result["scope"], result["edited"]) == ("declined", False, None, False)
    assert result["arguments"] == DEPLOY["arguments"] and [a["by"] for a in result["approvals"]] == ["alice"]
    assert (result["answeredBy"], result["reason"]) == ("alice", "changed my mind")
    assert req.digest == digest(approval_content(DEPLOY, None))


def test_already_voted_and_approvals_naming_nobody_fill_no_seat() -> None:
    reg = fresh()
    rid = ask(reg, quorum=3)
    reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
    with pytest.raises(AlreadyVoted):
        reg.prepare_approve("s", rid, user_id="alice")
    # A quorum counts people: an admin without a sub, or a link naming nobody, takes no seat.
    with pytest.raises(NoSeat, match="an admin token without a sub cannot fill a quorum seat"):
        reg.prepare_approve("s", rid, user_id=None, via="admin")
    with pytest.raises(NoSeat, match="a link not bound to one person"):
        reg.prepare_approve("s", rid, user_id=None, via="link")
    reg.apply(reg.prepare_approve("s", rid, user_id=None, via="admin", answered_by="root"))  # one with a sub: a person
    reg.apply(reg.prepare_approve("s", rid, user_id="bob"))
    assert reg.get("s", rid).status is Status.ANSWERED  # type: ignore[union-attr]
    # A quorum of 1 may still be ended by one: the decision asked for was one.
    one = ask(reg)
    reg.apply(reg.prepare_approve("s", one, user_id=None, via="link"))
    assert reg.get("s", one).status is Status.ANSWERED  # type: ignore[union-attr]


def test_only_the_audience_approves() -> None:
    reg = fresh()
    rid = ask(reg, quorum=2, to=("alice", "bob"))
    with pytest.raises(NotPending):
        reg.prepare_approve("s", rid, user_id="mallory")


def test_edits_are_checked_against_the_schema() -> None:
    reg = fresh()
    rid = ask(reg, editable=True, schema=SCHEMA)
    with pytest.raises(InvalidRequest) as bad:
        reg.prepare_approve("s", rid, {"env": "moon"}, user_id="alice")
    assert bad.value.details[0]["loc"] == "arguments.env"
    with pytest.raises(InvalidRequest) as missing:
        reg.prepare_approve("s", rid, {"replicas": 2}, user_id="alice")
    assert missing.value.details[0]["loc"] == "arguments"
    assert reg.get("s", rid).pending  # type: ignore[union-attr]
    reg.apply(reg.prepare_approve("s", rid, {"env": "staging", "replicas": 2}, user_id="alice"))
    result = reg.get("s", rid).result()  # type: ignore[union-attr]
    assert (result["arguments"], result["edited"], result["approved"]) == ({"env": "staging", "replicas": 2}, True, True)
    assert reg.get("s", rid).digest == digest(approval_content({"name": "deploy", "arguments": result["arguments"]}, "once"))  # type: ignore[union-attr]


def test_an_edit_equal_as_json_is_no_edit() -> None:
    reg = fresh()
    rid = ask(reg, editable=True)
    reg.apply(reg.prepare_approve("s", rid, codec.loads(b'{"replicas": 3.0, "env": "prod"}'), user_id="alice"))
    assert reg.get("s", rid).result()["edited"] is False  # type: ignore[union-attr]


def test_what_an_approval_may_not_carry_is_refused_and_changes_nothing() -> None:
    reg = fresh()
    rid = ask(reg)
    with pytest.raises(InvalidRequest, match="not editable"):
        reg.prepare_approve("s", rid, {"env": "staging"}, user_id="alice")
    with pytest.raises(InvalidRequest, match="always"):
        reg.prepare_approve("s", rid, scope="always", user_id="alice")
    with pytest.raises(InvalidRequest, match="approve or decline"):
        reg.prepare_answer("s", rid, {"Deploy?": "yes"}, user_id="alice")
    question, _ = reg.ask("q", "alice", [{"question": "Deploy?"}])
    with pytest.raises(InvalidRequest, match="not an action"):
        reg.prepare_approve("q", question.request_id, user_id="alice")
    assert reg.get("s", rid).approvals == 0  # type: ignore[union-attr]


def test_always_only_when_every_approval_chose_it() -> None:
    for scopes, expected in ((("always", "always"), "always"), (("always", "once"), "once"), (("once", "always"), "once")):
        reg = fresh()
        rid = ask(reg, quorum=2, allowAlways=True)
        reg.apply(reg.prepare_approve("s", rid, user_id="alice", scope=scopes[0]))
        reg.apply(reg.prepare_approve("s", rid, user_id="bob", scope=scopes[1]))
        assert reg.get("s", rid).result()["scope"] == expected  # type: ignore[union-attr]


def test_a_timeout_never_approves() -> None:
    clock = Clock()
    reg = fresh(clock)
    req, _ = reg.ask("s", "", None, to=("alice", "bob"), action=DEPLOY, quorum=2, timeout=10)
    reg.apply(reg.prepare_approve("s", req.request_id, user_id="alice"))
    clock.now += 11
    reg.advance()
    result = req.result()
    assert (result["status"], result["approved"], result["scope"]) == ("timeout", False, None)
    assert [a["by"] for a in result["approvals"]] == ["alice"]
    assert req.digest == digest(approval_content(DEPLOY, None))


def test_every_tab_of_the_audience_hears_each_approval_and_a_repush_carries_them() -> None:
    reg = fresh()
    for conn, user in (("t1", "alice"), ("t2", "bob"), ("t3", "mallory")):
        reg.connect(conn, user)
        reg.subscribe(conn, "*")
    rid = ask(reg, quorum=3, to=("alice", "bob"))
    reg.drain()
    reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
    sends = reg.drain().sends
    assert len(sends) == 1 and set(sends[0].to) == {"t1", "t2"}
    voted = codec.loads(sends[0].event.frame)
    assert voted["type"] == "ask_user_questions_voted"
    assert voted["payload"] == {"requestId": rid, "approvals": [{"by": "alice", "via": "ws", "at": "2027-01-15T08:00:00.000Z"}], "needed": 3}
    reg.connect("t4", "bob")
    reg.subscribe("t4", "s")
    pushed = [codec.loads(s.event.frame) for s in reg.drain().sends if s.event.type == "ask_user_questions"]
    payload = pushed[0]["payload"]
    assert payload["action"] == DEPLOY and payload["quorum"] == 3 and [a["by"] for a in payload["approvals"]] == ["alice"]
    assert "questions" not in payload
    listed = reg.get("s", rid).describe()  # type: ignore[union-attr]
    assert (listed["action"], listed["quorum"], len(listed["approvals"])) == (DEPLOY, 3, 1)


def test_an_extension_and_an_approval_decided_at_once_both_show_in_the_next_push() -> None:
    reg = fresh()
    req, _ = reg.ask("s", "", None, to=("alice", "bob"), action=DEPLOY, quorum=2, max_extension=60)
    extend = reg.prepare_extend("s", req.request_id, 30, user_id="bob")
    approve = reg.prepare_approve("s", req.request_id, user_id="alice")
    assert reg.apply(approve) and reg.apply(extend)  # the extension's frame was encoded before the approval
    payload = codec.loads(req.ask_event().frame)["payload"]
    assert payload["expiresAt"] == "2027-01-15T08:15:30.000Z" and [a["by"] for a in payload["approvals"]] == ["alice"]


@dataclass
class RowOf:
    """A store's own row: only what guards read."""

    status: Status
    approvals: int
    expires_at: float = NOW
    escalations: int = 0
    notified: bool = False


def test_taking_and_apply_agree_on_batches_of_approvals() -> None:
    for n in range(1, 4):
        for pick in itertools.product(range(5), repeat=n):
            reg = fresh()
            rid = ask(reg, quorum=2)
            reg.apply(reg.prepare_approve("s", rid, user_id="alice"))
            candidates: list[Change] = [
                reg.prepare_approve("s", rid, user_id="bob"),
                reg.prepare_approve("s", rid, user_id="carol"),
                reg.prepare_decline("s", rid, None, user_id="bob"),
                reg.prepare_withdraw("s", rid)[1],  # type: ignore[list-item]
                Approved("s", rid, 1, *_vote(reg, rid)),
            ]
            batch = [candidates[i] for i in pick]
            expected = reg.taking(batch)
            took = [c for c in batch if reg.apply(c)]
            assert [id(c) for c in took] == [id(c) for c in expected], (pick, took, expected)


def _vote(reg: StepRegistry, rid: str) -> tuple[Any, Any]:
    """A made-up approval short of a quorum against count 1 (another node's, say)."""
    req = reg.get("s", rid)
    assert req is not None and req.approval is not None
    vote = Vote("dave", "ws", NOW)
    return vote, req.approval.with_vote(vote)
