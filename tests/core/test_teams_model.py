"""A stateful property-based test of audiences and escalation (spec G, H)
against a naive reference model.

Hypothesis drives the real registry, each change committed to an SQLite
store then applied (as the hub does), through any order of group changes,
tabs coming and going, asks of users and groups with escalation steps,
answers by anyone, time passing, the timer firing and restarts from the
store. After every step the frames sent must be exactly the model's:
questions to the audience as the groups are now, ``reassigned`` to those
who left it, each escalation step's push once, at its time, to those it
added (and word of it to those who had it); and every step taken at most
once.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from askd.core import AskInput, Forbidden, InvalidRequest, Limits, NotPending, SessionOwnerMismatch
from askd.core.registry import Registry
from askd.core.changes import Change
from askd.store.sqlite import SqliteStore
from askd.core.snapshot import restore
from tests.core.test_registry import FakeClock
from tests.support.profiles import scaled
from tests.core.test_registry_model import at_once

USERS = ("alice", "bob", "carol")
GROUPS = ("g1", "g2")
ENTRIES = USERS + tuple(f"group:{g}" for g in GROUPS)
SESSIONS = ("s1", "s2", "s3")
QS = [{"question": "Deploy?"}]
TIMEOUT = 10.0


class Stored(Registry):
    store: SqliteStore

    def keep(self, changes: list[Change]) -> int:
        return sum(1 for c in at_once(self.store.commit(changes)) if self.apply(c))


@dataclass
class MReq:
    rid: str
    sid: str
    to: frozenset[str]
    steps: tuple[tuple[float, tuple[str, ...]], ...]
    created: float
    taken: int = 0
    status: str = "pending"

    def entries(self) -> set[str]:
        out = set(self.to)
        for _, e in self.steps[: self.taken]:
            out.update(e)
        return out


@dataclass
class Model:
    groups: dict[str, frozenset[str]] = field(default_factory=dict)
    conns: dict[str, str] = field(default_factory=dict)
    reqs: list[MReq] = field(default_factory=list)
    sessions: dict[str, frozenset[str]] = field(default_factory=dict)  # session -> its first question's entries

    def users(self, entries: set[str] | frozenset[str]) -> set[str]:
        out: set[str] = set()
        for e in entries:
            out.update(self.groups.get(e[6:], ()) if e.startswith("group:") else (e,))
        return out

    def audience(self, req: MReq) -> set[str]:
        return self.users(req.entries())

    def conns_of(self, users: set[str]) -> frozenset[str]:
        return frozenset(c for c, u in self.conns.items() if u in users)

    def pending(self) -> list[MReq]:
        return [r for r in self.reqs if r.status == "pending"]


def canon(sends: list[tuple[frozenset[str], str, str, str]]) -> list[tuple[tuple[str, ...], str, str, str]]:
    return sorted((tuple(sorted(to)), t, rid, reason) for to, t, rid, reason in sends if to)


class TeamsMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.clock = FakeClock()
        self.ids = itertools.count(1)
        self.conn_ids = itertools.count(1)
        self.store = SqliteStore(Path(":memory:"))
        self.reg = self.new_registry()
        self.m = Model()
        self.steps_taken: list[tuple[str, int]] = []

    def new_registry(self) -> Stored:
        reg = Stored(Limits(question_timeout=TIMEOUT, max_pending_per_session=50), clock=self.clock, new_id=lambda: f"r{next(self.ids)}")
        reg.store = self.store
        return reg

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()

    def expect(self, expected: list[tuple[frozenset[str], str, str, str]]) -> None:
        got = []
        for s in self.reg.drain().sends:
            f = json.loads(s.event.frame)
            if f["type"] in ("ask_user_questions", "ask_user_questions_cancelled", "ask_user_questions_escalated"):
                got.append((frozenset(s.to), f["type"], f["payload"]["requestId"], f["payload"].get("reason", "")))
        assert canon(got) == canon(expected), f"sent {canon(got)}\nexpected {canon(expected)}"

    # ---- groups and tabs -------------------------------------------------------

    @rule(group=st.sampled_from(GROUPS), members=st.frozensets(st.sampled_from(USERS)))
    def set_group(self, group: str, members: frozenset[str]) -> None:
        before = {r.rid: self.m.audience(r) for r in self.m.pending()}
        assert self.reg.keep([self.reg.prepare_group_set(group, members)]) == 1
        self.m.groups[group] = members
        self.expect(self.moved(before))

    @rule(group=st.sampled_from(GROUPS))
    def delete_group(self, group: str) -> None:
        if group not in self.m.groups:
            try:
                self.reg.prepare_group_delete(group)
            except Exception as err:
                assert err.__class__.__name__ == "NotFound"
                return
            raise AssertionError("deleting an unknown group was not refused")
        before = {r.rid: self.m.audience(r) for r in self.m.pending()}
        assert self.reg.keep([self.reg.prepare_group_delete(group)]) == 1
        del self.m.groups[group]
        self.expect(self.moved(before))

    def moved(self, before: dict[str, set[str]]) -> list[tuple[frozenset[str], str, str, str]]:
        out = []
        for r in self.m.pending():
            now = self.m.audience(r)
            out.append((self.m.conns_of(now - before[r.rid]), "ask_user_questions", r.rid, ""))
            out.append((self.m.conns_of(before[r.rid] - now), "ask_user_questions_cancelled", r.rid, "reassigned"))
        return out

    @rule(user=st.sampled_from(USERS))
    def connect(self, user: str) -> None:
        conn = f"c{next(self.conn_ids)}"
        self.reg.connect(conn, user)
        self.m.conns[conn] = user

    @precondition(lambda self: self.m.conns)
    @rule(data=st.data(), sid=st.sampled_from(SESSIONS + ("*",)))
    def subscribe(self, data: st.DataObject, sid: str) -> None:
        conn = data.draw(st.sampled_from(sorted(self.m.conns)))
        user = self.m.conns[conn]
        mine = [r for r in self.m.pending() if user in self.m.audience(r) and sid in ("*", r.sid)]
        allowed = sid == "*" or sid not in self.m.sessions or user in self.m.users(self.m.sessions[sid]) or mine
        if not allowed:
            try:
                self.reg.subscribe(conn, sid)
            except Forbidden:
                return
            raise AssertionError(f"{user} may not subscribe to {sid}")
        self.reg.subscribe(conn, sid)
        self.expect([(frozenset({conn}), "ask_user_questions", r.rid, "") for r in mine])

    # ---- asks and answers -----------------------------------------------------

    @rule(
        sid=st.sampled_from(SESSIONS),
        to=st.frozensets(st.sampled_from(ENTRIES), min_size=1, max_size=3),
        steps=st.lists(st.tuples(st.sampled_from([1.0, 3.0, 6.0]), st.frozensets(st.sampled_from(ENTRIES), min_size=1, max_size=2)), max_size=2),
    )
    def ask(self, sid: str, to: frozenset[str], steps: list[tuple[float, frozenset[str]]]) -> None:
        esc = tuple((after, tuple(sorted(e))) for after, e in steps)
        named = set(to) | {e for _, es in steps for e in es}
        call = lambda: self.reg.prepare_ask(AskInput(sid, "", QS, to=tuple(sorted(to)), escalate=esc))  # noqa: E731
        unknown = any(e.startswith("group:") and e[6:] not in self.m.groups for e in named)
        bad_steps = any(esc[i][0] <= esc[i - 1][0] for i in range(1, len(esc)))
        mismatch = sid in self.m.sessions and self.m.sessions[sid] != to
        if mismatch or unknown or bad_steps:
            try:
                call()
            except (SessionOwnerMismatch, InvalidRequest):
                return
            raise AssertionError("the ask should have been refused")
        req, change = call()
        assert change is not None and self.reg.keep([change]) == 1
        self.m.sessions.setdefault(sid, to)
        mreq = MReq(req.request_id, sid, to, esc, self.clock.now)
        self.m.reqs.append(mreq)
        self.expect([(self.m.conns_of(self.m.audience(mreq)), "ask_user_questions", mreq.rid, "")])

    @precondition(lambda self: self.m.reqs)
    @rule(data=st.data(), user=st.sampled_from(USERS))
    def answer(self, data: st.DataObject, user: str) -> None:
        r = data.draw(st.sampled_from(self.m.reqs))
        if r.status != "pending" or user not in self.m.audience(r):
            try:
                self.reg.prepare_answer(r.sid, r.rid, {"Deploy?": "y"}, user_id=user)
            except NotPending:
                return
            raise AssertionError(f"{user} answered {r.rid}, not theirs to answer")
        assert self.reg.keep([self.reg.prepare_answer(r.sid, r.rid, {"Deploy?": "y"}, user_id=user)]) == 1
        r.status = "answered"
        self.expect([(self.m.conns_of(self.m.audience(r)), "ask_user_questions_cancelled", r.rid, "answered")])

    # ---- time and restarts ------------------------------------------------------

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.5, 5.0]))
    def timer_fires_later(self, seconds: float) -> None:
        """Time passes and the one timer fires (at most once per deadline)."""
        self.clock.advance(seconds)
        now = self.clock.now
        expected = []
        for r in self.m.pending():
            # Every step comes before the timeout (afterSeconds < timeout):
            # a timer that fires late takes the steps, then ends the question.
            while r.taken < len(r.steps) and r.created + r.steps[r.taken][0] <= now:
                before = self.m.audience(r)
                r.taken += 1
                self.steps_taken.append((r.rid, r.taken))
                expected.append((self.m.conns_of(self.m.audience(r) - before), "ask_user_questions", r.rid, ""))
                # those who had it hear of the step
                expected.append((self.m.conns_of(self.m.audience(r) & before), "ask_user_questions_escalated", r.rid, ""))
            if r.created + TIMEOUT <= now:
                expected.append((self.m.conns_of(self.m.audience(r)), "ask_user_questions_cancelled", r.rid, "timeout"))
                r.status = "timeout"
        while (due := self.reg.due()):
            self.reg.keep(due)
        self.expect(expected)

    @rule()
    def restart(self) -> None:
        self.reg = self.new_registry()
        restore(at_once(self.store.load()), self.reg)
        self.m.conns.clear()
        self.expect([])

    # ---- invariants ----------------------------------------------------------------

    @invariant()
    def escalations_are_the_steps_taken_once_each(self) -> None:
        assert len(self.steps_taken) == len(set(self.steps_taken))
        for r in self.m.reqs:
            kept = self.reg.get(r.sid, r.rid)
            if kept is not None:
                assert kept.escalations == r.taken and kept.status.value == r.status, (r, kept)

    @invariant()
    def listings_show_the_audience(self) -> None:
        for user in USERS:
            mine = sorted(r.rid for r in self.m.pending() if user in self.m.audience(r))
            assert sorted(r.request_id for r in self.reg.pending(user_id=user)) == mine, user


TestTeamsModel = TeamsMachine.TestCase
TestTeamsModel.settings = settings(max_examples=scaled(0.5), stateful_step_count=settings.default.stateful_step_count)
