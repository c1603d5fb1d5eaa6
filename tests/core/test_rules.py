"""The rule table (``askd/core/rules.py``): one guard per kind of change,
which ``Registry.apply`` and ``Registry.taking`` both run, so they agree
change by change, in any batch."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import get_args

import pytest

from askd.core import AskInput
from askd.core.registry import rules
from askd.core.changes import Asked, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.lifecycle import TIMEOUT_ERROR, TRANSITIONS, Status, Trigger
from askd.core.registry import Registry
from askd.core.registry.rules import RULES, RowState, UnknownChange, takes

QS = [{"question": "Ship it?"}]
NOW = 1_800_000_000.0


def fresh() -> Registry:
    ids = itertools.count(1)
    return Registry(clock=lambda: NOW, new_id=lambda: f"r{next(ids)}")


def test_the_table_has_a_row_for_every_kind_of_change() -> None:
    assert set(RULES) == set(get_args(Change))
    assert all(rule.kind is kind for kind, rule in RULES.items())


def test_an_ended_guard_is_the_lifecycles_transitions() -> None:
    # Every other question guard's "pending" is the one state with moves out.
    assert {source for source, _ in TRANSITIONS} == {Status.PENDING}
    for status, trigger in itertools.product(Status, Trigger):
        change = Ended("s", "r", trigger, None, None, NOW)
        assert takes(change, RowState(status, NOW)) is ((status, trigger) in TRANSITIONS)
        assert takes(change, None) is False


@dataclass
class StoreRow:
    """A row as a store that keeps no engine holds it: only what guards read."""

    status: Status
    expires_at: float
    escalations: int = 0
    notified: bool = False


def test_guards_read_a_stores_own_row() -> None:
    pending, answered = StoreRow(Status.PENDING, NOW), StoreRow(Status.ANSWERED, NOW)
    assert takes(Extended("s", "r", NOW, NOW + 5, 0.0, b"{}"), pending)
    assert not takes(Extended("s", "r", NOW - 1, NOW + 5, 0.0, b"{}"), pending)  # decided against another deadline
    assert takes(Escalated("s", "r", 1), pending) and not takes(Escalated("s", "r", 1), StoreRow(Status.PENDING, NOW, 1))
    assert takes(Notified("s", "r"), pending) and not takes(Notified("s", "r"), answered)
    assert takes(Forgot("s", "r"), answered) and not takes(Forgot("s", "r"), pending) and not takes(Forgot("s", "r"), None)
    assert takes(GroupSet("g", ()), None) and takes(GroupDeleted("g"), ("a",)) and not takes(GroupDeleted("g"), None)
    req = fresh().prepare_ask(AskInput("s", "alice", QS))[1]
    assert req is not None and takes(req, None) and not takes(req, pending)


@dataclass
class Reminded:
    """A kind of change the table does not know (yet)."""

    session_id: str
    request_id: str


def test_an_unknown_kind_of_change_raises_and_is_never_taken_for_forgot() -> None:
    reg = fresh()
    req, asked = reg.prepare_ask(AskInput("s", "alice", QS))
    assert asked is not None and reg.apply(asked)
    reg.apply(Ended("s", req.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, NOW))
    unknown = Reminded("s", req.request_id)  # on an ended question, as a Forgot would take
    with pytest.raises(UnknownChange):
        reg.apply(unknown)  # type: ignore[arg-type]
    with pytest.raises(UnknownChange):
        reg.taking([unknown])  # type: ignore[list-item]
    with pytest.raises(UnknownChange):
        takes(unknown, None)  # type: ignore[arg-type]
    assert reg.get("s", req.request_id) is req  # not forgotten


def test_an_extension_after_its_ask_in_one_batch_is_taken_as_apply_takes_it() -> None:
    reg = fresh()
    req, asked = reg.prepare_ask(AskInput("s", "alice", QS))
    assert asked is not None and req.frame is not None
    extended = Extended("s", req.request_id, req.expires_at, req.expires_at + 30, 0.0, req.frame)
    assert reg.taking([asked, extended]) == [asked, extended]
    assert reg.apply(asked) and reg.apply(extended)


def _question_changes(req_asked: Asked) -> list[Change]:
    req = req_asked.request
    sid, rid, at = req.session_id, req.request_id, req.expires_at
    frame = req.frame or b""
    return [
        Ended(sid, rid, Trigger.ANSWER, {"Ship it?": "yes"}, None, NOW),
        Ended(sid, rid, Trigger.EXPIRE, None, TIMEOUT_ERROR, NOW),
        Extended(sid, rid, at, at + 30, 0.0, frame),
        Extended(sid, rid, at + 30, at + 60, 0.0, frame),  # only after the one before
        Escalated(sid, rid, 1),
        Escalated(sid, rid, 2),
        Notified(sid, rid),
        Forgot(sid, rid),
    ]


@pytest.mark.parametrize("asked_in_batch", [False, True])
def test_taking_and_apply_agree_on_every_batch_of_up_to_three_changes(asked_in_batch: bool) -> None:
    steps = ((60.0, ("bob",)), (120.0, ("carol",)))
    for n in range(1, 4):
        for pick in itertools.product(range(8), repeat=n):
            reg = fresh()
            asked = reg.prepare_ask(AskInput("s", "alice", QS, escalate=steps, max_extension=100))[1]
            assert asked is not None
            changes = _question_changes(asked)
            batch: list[Change] = [changes[i] for i in pick]
            if asked_in_batch:
                batch.insert(0, asked)
            else:
                assert reg.apply(asked)
            expected = reg.taking(batch)
            took = [c for c in batch if reg.apply(c)]
            assert [id(c) for c in took] == [id(c) for c in expected], (batch, took, expected)


def test_taking_and_apply_agree_on_groups() -> None:
    changes: list[Change] = [GroupSet("g", ("a",)), GroupSet("g", ()), GroupDeleted("g"), GroupDeleted("h")]
    for n in range(1, 5):
        for batch in itertools.product(changes, repeat=n):
            reg = fresh()
            expected = reg.taking(list(batch))
            took = [c for c in batch if reg.apply(c)]
            assert [id(c) for c in took] == [id(c) for c in expected], (batch, took, expected)
