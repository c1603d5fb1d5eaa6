""""Would this change take effect?" is a pure function of the core
(``Registry.taking``, ``core/rules.py``); each store decides it from what
it holds (the memory store asks the same rules of its own rows). Batches with every kind of change, racing
each other inside one batch, must get the same answer from all three."""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from askd.core import AskInput, Connection, Limits, Request
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.core.registry import rules
from askd.core.approvals import Approval, Vote
from askd.core.changes import (
    Approved, Asked, AwayEnded, AwaySet, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified,
)
from askd.core.lifecycle import CANCEL_ERROR, TIMEOUT_ERROR, Trigger
from askd.store import Store
from askd.store.memory import MemoryStore
from askd.store.redis import RedisStore
from askd.store.sqlite import SqliteStore
from tests.support.redis_server import RedisServer

QS = [{"question": "Ship it?"}]
NOW = 1_800_000_000.0


class Quiet:
    """A listener that takes what a shared store's follower hands it."""

    node_id = "node0"

    def on_changes(self, changes: list[Change]) -> None: ...
    def on_failed(self, err: Exception) -> None: ...
    def on_ok(self) -> None: ...
    def on_command(self, command: dict[str, Any]) -> None: ...
    def local_connections(self) -> list[Connection]:
        return []


@asynccontextmanager
async def loaded(kind: str, tmp_path: Path, clock: Callable[[], float] = time.time) -> AsyncIterator[Store]:
    """A ``sqlite``, ``redis`` or ``memory`` store (its claims on ``clock``),
    loaded into an empty registry."""
    server = None
    if kind == "sqlite":
        opened: Store = SqliteStore(tmp_path / "askd.db", clock)
    elif kind == "memory":
        opened = MemoryStore(clock)
    else:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        server = RedisServer(tmp_path / "redis").start()
        opened = RedisStore(server.url, "node0", clock=clock)
    opened.attach(Quiet())
    restore(await opened.load(), Registry())
    try:
        yield opened
    finally:
        await opened.aclose()
        if server is not None:
            server.stop()


@pytest.fixture(params=["sqlite", "redis", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(request.param, tmp_path) as opened:
        yield opened


def ended(req: Request, trigger: Trigger, answers: dict[str, Any] | None = None, error: str | None = None) -> Ended:
    return Ended(req.session_id, req.request_id, trigger, answers, error, NOW + 1)


async def test_the_core_and_the_stores_agree_on_what_takes_effect(store: Store) -> None:
    ids = itertools.count(1)
    reg = Registry(Limits(), clock=lambda: NOW, new_id=lambda: f"r{next(ids)}")

    async def step(batch: list[Change]) -> list[bool]:
        expected = reg.taking(batch)
        took = await store.commit(batch)
        assert [id(c) for c in took] == [id(c) for c in expected], (batch, took, expected)
        for change in took:
            assert reg.apply(change), change  # apply agrees, change by change
        return [any(c is t for t in took) for c in batch]

    asks = [reg.prepare_ask(AskInput(f"s{i % 2}", "alice", QS)) for i in range(4)]
    assert await step([change for _, change in asks if change is not None]) == [True] * 4
    a, b, c, d = (req for req, _ in asks)
    unknown = Request("nope", "s0", "alice", NOW, NOW + 1)

    assert await step([
        ended(a, Trigger.ANSWER, {"Ship it?": "yes"}),
        ended(a, Trigger.EXPIRE, error=TIMEOUT_ERROR),  # lost to the answer before it
        Notified(b.session_id, b.request_id),
        ended(b, Trigger.CANCEL, error=CANCEL_ERROR),
        Notified(b.session_id, b.request_id),  # ended a step before
        Forgot(c.session_id, c.request_id),  # still pending
        Forgot(a.session_id, a.request_id),  # ended earlier in this batch
        ended(unknown, Trigger.ANSWER, {"Ship it?": "no"}),
        Notified(unknown.session_id, unknown.request_id),
        Forgot(unknown.session_id, unknown.request_id),
    ]) == [True, False, True, True, False, False, True, False, False, False]

    assert await step([
        ended(a, Trigger.ANSWER, {"Ship it?": "again"}),  # forgotten
        Forgot(a.session_id, a.request_id),
        ended(c, Trigger.EXPIRE, error=TIMEOUT_ERROR),
        Forgot(b.session_id, b.request_id),
        Forgot(b.session_id, b.request_id),
        Notified(d.session_id, d.request_id),
        Notified(d.session_id, d.request_id),  # marking twice still takes
    ]) == [False, False, True, True, False, True, True]

    # Extensions: compare and set on the deadline each was decided against.
    e = reg.prepare_ask(AskInput("s9", "alice", QS, max_extension=100))[1]
    assert e is not None and await step([e]) == [True]
    req = e.request
    first = reg.prepare_extend("s9", req.request_id, 30, user_id="alice")
    rival = reg.prepare_extend("s9", req.request_id, 50, user_id="alice")  # decided against the same deadline
    assert await step([first, rival]) == [True, False]
    after = reg.prepare_extend("s9", req.request_id, 5)  # the agent's, against the moved deadline
    assert await step([after, rival]) == [True, False]
    again = reg.prepare_extend("s9", req.request_id, 5)
    assert await step([again]) == [True]
    assert await step([
        ended(req, Trigger.ANSWER, {"Ship it?": "yes"}),
        reg.prepare_extend("s9", req.request_id, 5),  # ended earlier in this batch
        Extended(unknown.session_id, unknown.request_id, NOW + 1, NOW + 2, 0.0, b"{}"),
    ]) == [True, False, False]

    # Escalation steps: once each, only while pending.
    e, _ = reg.prepare_ask(AskInput("s10", "alice", QS, escalate=((60.0, ("bob",)), (120.0, ("carol",)))))
    assert await step([_]) == [True]
    assert await step([
        Escalated(e.session_id, e.request_id, 1),
        Escalated(e.session_id, e.request_id, 1),  # the same step, decided by another node
        Escalated(d.session_id, d.request_id, 1),  # pending, but with no steps: still once
        Escalated(e.session_id, e.request_id, 2),
        Escalated(a.session_id, a.request_id, 1),  # forgotten
        ended(e, Trigger.ANSWER, {"Ship it?": "yes"}),
        Escalated(e.session_id, e.request_id, 3),  # ended
    ]) == [True, False, True, True, False, True, False]
    assert e.escalations == 2

    # Approvals (protocol section 17): compare and set on the count of
    # approvals each was decided against; the last one, and a denial, end it once.
    action = {"name": "deploy", "arguments": {"env": "prod", "n": 2**60 + 1}}
    ap, asked_ap = reg.prepare_ask(AskInput("s11", "", None, to=("alice", "bob", "carol"), action=action, quorum=2))
    assert asked_ap is not None and await step([asked_ap]) == [True]
    first = reg.prepare_approve("s11", ap.request_id, user_id="alice")
    rival = reg.prepare_approve("s11", ap.request_id, user_id="bob")  # decided against the same count
    assert await step([first, rival]) == [True, False]
    last = reg.prepare_approve("s11", ap.request_id, user_id="bob")
    other = reg.prepare_approve("s11", ap.request_id, user_id="carol")  # the last slot too
    deny = reg.prepare_decline("s11", ap.request_id, "no", user_id="carol")
    assert await step([last, other, deny, rival]) == [True, False, False, False]
    assert ap.approvals == 2 and ap.status.value == "answered"
    denied, asked_dn = reg.prepare_ask(AskInput("s12", "", None, to=("alice", "bob"), action=action, quorum=2))
    assert asked_dn is not None and await step([asked_dn]) == [True]
    one = reg.prepare_approve("s12", denied.request_id, user_id="alice")
    no = reg.prepare_decline("s12", denied.request_id, None, user_id="bob")
    two = reg.prepare_approve("s12", denied.request_id, user_id="bob")  # decided before the approval above: stale
    assert await step([one, no, two]) == [True, True, False]

    # Groups: a set always takes; a delete only of a group held (as the
    # batch left it). What took is what a fresh load restores.
    assert await step([
        GroupDeleted("oncall"),  # none yet
        GroupSet("oncall", ("alice", "bob")),
        GroupSet("leads", ()),
        GroupDeleted("leads"),
        GroupDeleted("leads"),  # deleted a step before
        GroupSet("oncall", ("bob",)),
    ]) == [False, True, True, True, False, True]
    assert reg.audiences.groups == {"oncall": ("bob",)}
    if isinstance(store, SqliteStore):  # a second load of a RedisStore would start a second follower
        fresh = Registry(Limits(), clock=lambda: NOW)
        restore(await store.load(), fresh)
        assert fresh.audiences.groups == {"oncall": ("bob",)}
        kept = fresh.get(e.session_id, e.request_id)
        assert kept is not None and (kept.escalate, kept.escalations) == (e.escalate, 2)
        kept = fresh.get(ap.session_id, ap.request_id)  # an approved action: its approvals and final record
        assert kept is not None and kept.approval == ap.approval and kept.approvals == 2
        kept = fresh.get(denied.session_id, denied.request_id)  # a denied one: the approval given before
        assert kept is not None and kept.approval == denied.approval and [v.by for v in kept.approval.votes] == ["alice"]


# ---- Every kind of change in the rules' table, on every row state that matters ----
#
# The rules (``core/rules.py`` ``RULES``), SQLite's SQL (``store/sqlite/writes.py``)
# and Redis's Lua (``store/redis/commit.lua``) each say when a change takes
# effect. Below, every kind the table has meets every state its row can be
# in (none, pending, escalated, notified, an action with approvals, ended by
# each trigger, forgotten; a group or an away held or not), and each store
# must take exactly what ``rules.taking`` takes. A kind added to the table
# without cases here fails; with cases but without its SQL or Lua, its store
# refuses it (SQLite raises, Redis takes nothing) where the rules take it.

ACTION = {"name": "deploy", "arguments": {"env": "prod"}}


class Scenes:
    """Rows put into each state through the registry and the store alike
    (each commit checked as it goes), each case on rows of its own."""

    def __init__(self, store: Store) -> None:
        self.store, self.n = store, itertools.count(1)
        ids = itertools.count(1)
        self.reg = Registry(Limits(), clock=lambda: NOW, new_id=lambda: f"m{next(ids)}")

    async def commit(self, *batch: Change | None) -> None:
        changes = [c for c in batch if c is not None]
        expected = rules.taking(self.reg, changes)
        took = await self.store.commit(changes)
        assert [id(c) for c in took] == [id(c) for c in expected] == [id(c) for c in changes], changes
        for change in took:
            assert self.reg.apply(change), change

    async def question(self, state: str) -> Request:
        """A question of its own session in ``state`` (the registry's row;
        for ``absent`` one never asked)."""
        sid = f"case{next(self.n)}"
        if state == "absent":
            return Request(f"absent-{sid}", sid, "alice", NOW, NOW + 60)
        if state.startswith("action"):
            ask = AskInput(sid, "", None, to=("alice", "bob", "carol"), action=ACTION, quorum=3)
        else:
            ask = AskInput(sid, "alice", QS, max_extension=100, escalate=((60.0, ("bob",)),))
        req, asked = self.reg.prepare_ask(ask)
        await self.commit(asked)
        rid = req.request_id
        if state == "escalated":
            await self.commit(Escalated(sid, rid, 1))
        elif state == "notified":
            await self.commit(Notified(sid, rid))
        elif state == "extended":
            await self.commit(self.reg.prepare_extend(sid, rid, 30, user_id="alice"))
        elif state == "action, one approval":
            await self.commit(self.reg.prepare_approve(sid, rid, user_id="alice"))
        elif state.startswith("ended") or state == "forgotten":
            trigger = Trigger(state.split(" ")[-1]) if state.startswith("ended") else Trigger.ANSWER
            await self.commit(ended(req, trigger, {"Ship it?": "yes"} if trigger is Trigger.ANSWER else None, None))
            if state == "forgotten":
                await self.commit(Forgot(sid, rid))
        kept = self.reg.get(sid, rid)
        return kept if kept is not None else req


QUESTION_STATES = (
    "absent", "pending", "escalated", "notified", "extended", "action", "action, one approval",
    *(f"ended {t.value}" for _, t in rules.TRANSITIONS), "forgotten",
)


def _approval(req: Request, by: str) -> Approval:
    base = req.approval or Approval(2, {})
    return Approval(base.quorum, base.arguments, (*base.votes, Vote(by, "ws", NOW)))


def _question_cases(req: Request) -> dict[type, list[Change]]:
    """Each kind about a question, in every variant its guard reads: the
    trigger, a compare-and-set value matching the row's or stale."""
    sid, rid = req.session_id, req.request_id
    again = Registry(Limits(), clock=lambda: NOW, new_id=lambda: rid).prepare_ask(AskInput(sid, "alice", QS))[1]
    assert again is not None and again.request.request_id == rid
    ends: list[Change] = [
        ended(req, t, {"Ship it?": "yes"} if t is Trigger.ANSWER else None, None if t is Trigger.ANSWER else "over")
        for _, t in rules.TRANSITIONS
    ]
    for counted in (req.approvals, req.approvals + 1):  # an action's last approval: the row's count, or stale
        last = ended(req, Trigger.ANSWER, None)
        last.answered_by, last.via, last.counted, last.approval = "bob", "ws", counted, _approval(req, "bob")
        ends.append(last)
    return {
        Asked: [again],
        Ended: ends,
        Approved: [Approved(sid, rid, n, Vote("bob", "ws", NOW), _approval(req, "bob")) for n in (req.approvals, req.approvals + 1)],
        Extended: [Extended(sid, rid, at, NOW + 500, 0.0, b"{}") for at in (req.expires_at, req.expires_at + 1)],
        Escalated: [Escalated(sid, rid, step) for step in (req.escalations, req.escalations + 1, req.escalations + 2)],
        Notified: [Notified(sid, rid)],
        Forgot: [Forgot(sid, rid)],
    }


async def _group_cases(scenes: Scenes, kind: type) -> list[Change]:
    out: list[Change] = []
    for held in (False, True):
        name = f"g{next(scenes.n)}"
        if held:
            await scenes.commit(scenes.reg.prepare_group_set(name, ["alice"]))
        out.append(GroupSet(name, ("bob",)) if kind is GroupSet else GroupDeleted(name))
    return out


async def _away_cases(scenes: Scenes, kind: type) -> list[Change]:
    out: list[Change] = []
    until = NOW + 600
    for held in (False, True):
        for variant in ((NOW + 900,) if kind is AwaySet else (None, until, until + 1)):
            user = f"u{next(scenes.n)}"
            if held:
                await scenes.commit(scenes.reg.prepare_away(user, until, ["bob"]))
            out.append(AwaySet(user, variant or 0.0, ("carol",)) if kind is AwaySet else AwayEnded(user, variant))
    return out


async def test_every_kind_of_change_on_every_row_state_takes_what_the_rules_take(store: Store) -> None:
    scenes = Scenes(store)
    outcomes: dict[type, set[bool]] = {}
    for kind, rule in rules.RULES.items():
        cases: list[Change] = []
        if rule.lookup == "get":
            for state in QUESTION_STATES:
                variants = _question_cases(await scenes.question(state)).get(kind)
                assert variants, f"{kind.__name__} has no cases here: add them (and its SQL and Lua)"
                for i in range(len(variants)):
                    # a row of its own for each variant: each meets the state as made
                    cases.append(_question_cases(await scenes.question(state))[kind][i])
        elif rule.lookup == "group":
            cases = await _group_cases(scenes, kind)
        elif rule.lookup == "away":
            cases = await _away_cases(scenes, kind)
        assert cases, f"no cases for {kind.__name__}'s lookup {rule.lookup!r}: add them (and its SQL and Lua)"
        for change in cases:
            expected = rules.taking(scenes.reg, [change])
            took = await store.commit([change])
            assert [id(c) for c in took] == [id(c) for c in expected], (store.kind, change)
            outcomes.setdefault(kind, set()).add(bool(took))
    # Every kind took effect somewhere, so a store missing its SQL or Lua
    # (taking nothing of it) cannot agree with the rules by accident.
    assert all(True in outcomes[kind] for kind in rules.RULES), outcomes
