"""A stateful property-based test of the core registry against a reference model.

Hypothesis drives the real :class:`askd.core.registry.Registry` (with a fake clock)
and a small model of what the spec and ``docs/decisions.md`` promise, side by
side, through any order of asks (by agent tokens with and without a
``sub``), connects, subscribes, disconnects, answers,
clock jumps, timer firings, session cancels and restarts (the registry
rebuilt from the SQLite store every change went through, as the daemon's
hub drives it). After every step the frames
the registry asked to send must be exactly the model's, and the invariants at
the bottom must hold. ``pytest --hypothesis-profile=long`` runs it longer.

The model is deliberately naive: lists and linear scans where the registry
has heaps and indexes, so that the two agree only if the registry is right.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from askd.core import (
    Forbidden,
    NotAllowed,
    InvalidAnswer,
    InvalidRequest,
    Limits,
    NotFound,
    NotPending,
    AskInput,
    Request,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.registry import Registry
from askd.core.events import isotime
from askd.core.lifecycle import CANCEL_ERROR, TIMEOUT_ERROR
from askd.core.changes import Change
from askd.store.sqlite import SqliteStore
from askd.core.snapshot import restore
from tests.core.test_registry import FakeClock
from tests.support.profiles import scaled

USERS = ("alice", "bob")
AGENTS = (None, "agent-a", "agent-b")  # the agent token's sub; None: a token without one
SESSIONS = ("s1", "s2", "s3", "s4")
QUESTIONS = [
    {"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]},
    {"question": "Which features?", "multiSelect": True, "x-extra": {"kept": True}},
]
ANSWERS: dict[str, dict[str, Any] | None] = {
    # None marks answers the registry must refuse as invalid_answer.
    "one": {"Which database?": "SQLite"},
    "free_text": {"Which database?": "my own"},
    "multi": {"Which features?": ["a", "b"]},
    "both": {"Which database?": "PostgreSQL", "Which features?": []},
    "empty": None,
    "unknown_key": None,
    "list_for_single": None,
    "number": None,
}
INVALID = {
    "empty": {},
    "unknown_key": {"Which colour?": "red"},
    "list_for_single": {"Which database?": ["SQLite"]},
    "number": {"Which database?": 3},
}
QUESTION_TIMEOUT, MAX_TIMEOUT = 3.0, 100.0
PER_SESSION, TOTAL = 3, 6
END_REASON = {"answered": "answered", "timeout": "timeout", "cancelled": "cancelled", "declined": "declined"}


def at_once(coro: Any) -> Any:
    """Run a coroutine that must not suspend: the SQLite store never holds
    anything across an await (the hub relies on it)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the SQLite store suspended")


class StoredRegistry(Registry):
    """The registry as the hub drives it: each change the registry decides
    is committed to the store, then applied."""

    store: SqliteStore

    def _keep(self, changes: list[Change]) -> int:
        return sum(1 for c in at_once(self.store.commit(changes)) if self.apply(c))

    def ask(self, session_id: str, user_id: str, questions: list[dict[str, Any]], **kw: Any) -> tuple[Request, bool]:
        req, change = self.prepare_ask(AskInput(session_id, user_id, questions, **kw))
        if change is not None:
            assert self._keep([change]) == 1
        return req, change is not None

    def answer(self, session_id: str, request_id: str, answers: Any, *, user_id: str | None = None) -> Request:
        via = "ws" if user_id is not None else "admin"
        assert self._keep([self.prepare_answer(session_id, request_id, answers, user_id=user_id, via=via)]) == 1
        req = self.get(session_id, request_id)
        assert req is not None
        return req

    def decline(self, session_id: str, request_id: str, reason: str | None, *, user_id: str | None = None) -> None:
        via = "ws" if user_id is not None else "admin"
        assert self._keep([self.prepare_decline(session_id, request_id, reason, user_id=user_id, via=via)]) == 1

    def extend(self, session_id: str, request_id: str, seconds: float, *, user_id: str | None = None) -> None:
        assert self._keep([self.prepare_extend(session_id, request_id, seconds, user_id=user_id)]) == 1

    def cancel_session(self, session_id: str, agent: str | None = None) -> int:
        return self._keep(list(self.prepare_cancel(session_id, agent)))

    def advance(self) -> None:
        while due := self.due():
            self._keep(due)


@dataclass
class MReq:
    rid: str
    sid: str
    user: str
    seq: int
    expires_at: float
    key: str | None
    agent: str | None = None
    created_at: float = 0.0
    max_ext: float = 0.0  # the person's allowance (maxExtensionSeconds)
    extended: float = 0.0  # of which used
    on_timeout: dict[str, Any] | None = None
    status: str = "pending"
    answers: dict[str, Any] | None = None
    by: str | None = None
    via: str | None = None
    reason: str | None = None
    defaulted: bool = False
    ended_at: float | None = None
    forgotten: bool = False
    end_conns: frozenset[str] = frozenset()  # connections of the user when it ended

    @property
    def live(self) -> bool:
        return not self.forgotten

    def expected_result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"requestId": self.rid, "sessionId": self.sid, "status": self.status}
        if self.status == "pending":
            out["expiresAt"] = isotime(self.expires_at)
        if self.answers is not None:
            out["answers"] = self.answers
        if self.defaulted:
            out["defaulted"] = True
        if self.status in ("answered", "declined"):
            out["answeredBy"], out["via"] = self.by, self.via
        if self.reason is not None:
            out["reason"] = self.reason
        if self.status == "timeout":
            out["error"] = TIMEOUT_ERROR
        elif self.status == "cancelled":
            out["error"] = CANCEL_ERROR
        return out


@dataclass
class MSession:
    owner: str
    parent: str | None = None
    agent: str | None = None  # the agent that first asked in it (or named it as a parent)


@dataclass
class Model:
    clock: FakeClock
    ttl: float
    reqs: list[MReq] = field(default_factory=list)
    sessions: dict[str, MSession] = field(default_factory=dict)
    conns: dict[str, str] = field(default_factory=dict)  # connection -> user

    def live_in(self, sid: str) -> list[MReq]:
        return [r for r in self.reqs if r.sid == sid and r.live]

    def pending_in(self, sid: str) -> list[MReq]:
        return [r for r in self.reqs if r.sid == sid and r.status == "pending"]

    def pending(self) -> list[MReq]:
        return [r for r in self.reqs if r.status == "pending"]

    def conns_of(self, user: str) -> frozenset[str]:
        return frozenset(c for c, u in self.conns.items() if u == user)

    def ancestors(self, sid: str) -> list[str]:
        out, node = [], self.sessions.get(sid)
        while node is not None and node.parent is not None:
            out.append(node.parent)
            node = self.sessions.get(node.parent)
        return out

    def reaches(self, sid: str, agent: str | None) -> bool:
        """A token without a sub reaches every session; one with a sub,
        only a session it made (or one that does not exist yet)."""
        return agent is None or sid not in self.sessions or self.sessions[sid].agent == agent

    def subtree(self, sid: str) -> set[str]:
        return {s for s in self.sessions if s == sid or sid in self.ancestors(s)}

    def end(self, req: MReq, status: str, answers: dict[str, Any] | None = None, *, by: str | None = None,
            via: str | None = None, reason: str | None = None) -> None:
        assert req.status == "pending"
        req.status, req.answers, req.ended_at = status, answers, self.clock.now
        req.by, req.via, req.reason = by, via, reason
        if status == "timeout" and req.on_timeout is not None:
            req.answers, req.defaulted = req.on_timeout, True
        req.end_conns = self.conns_of(req.user)

    def collect(self) -> None:
        """Forget sessions that hold no live request and no child, to a fixed point."""
        changed = True
        while changed:
            changed = False
            for sid in list(self.sessions):
                has_child = any(s.parent == sid for s in self.sessions.values())
                if not self.live_in(sid) and not has_child:
                    del self.sessions[sid]
                    changed = True


def sent(reg: Registry) -> tuple[list[tuple[frozenset[str], dict[str, Any]]], list[Request]]:
    out = reg.drain()
    return [(frozenset(s.to), json.loads(s.event.frame)) for s in out.sends], out.ended


def cancelled(to: frozenset[str], req: MReq) -> tuple[frozenset[str], dict[str, Any]]:
    frame = {
        "type": "ask_user_questions_cancelled",
        "sessionId": req.sid,
        "payload": {"requestId": req.rid, "reason": END_REASON[req.status]},
    }
    if req.status in ("answered", "declined"):
        frame["payload"].update(answeredBy=req.by, via=req.via)
    if req.reason is not None:
        frame["payload"]["declineReason"] = req.reason
    if req.defaulted:  # the tabs are told which onTimeout default stood
        frame["payload"].update(answers=req.answers, defaulted=True)
    return to, frame


def canon(sends: list[tuple[frozenset[str], dict[str, Any]]]) -> list[str]:
    """Sends as sortable text, for steps whose order the spec leaves open."""
    return sorted(json.dumps([sorted(to), frame], sort_keys=True) for to, frame in sends)


class RegistryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.ids = itertools.count(1)
        self.conn_ids = itertools.count(1)
        # What the registry told the front end, accumulated over the whole run.
        self.ended_seen: Counter[str] = Counter()
        self.first_result: dict[str, dict[str, Any]] = {}
        self.frames_to: dict[str, list[dict[str, Any]]] = {}
        self.conn_user: dict[str, str] = {}  # every connection ever, for the cross-user check

    @initialize(ttl=st.sampled_from([0.0, 2.0, 5.0]))
    def start(self, ttl: float) -> None:
        limits = Limits(
            question_timeout=QUESTION_TIMEOUT,
            max_timeout=MAX_TIMEOUT,
            result_ttl=ttl,
            max_pending_per_session=PER_SESSION,
            max_pending_total=TOTAL,
        )
        self.limits = limits
        self.store = SqliteStore(Path(":memory:"))
        self.reg = self.new_registry()
        self.model = Model(self.clock, ttl)
        self.next_rid = 1

    def new_registry(self) -> StoredRegistry:
        reg = StoredRegistry(self.limits, clock=self.clock, new_id=lambda: f"r{next(self.ids)}")
        reg.store = self.store
        return reg

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()

    @rule()
    def restart(self) -> None:
        """The daemon stops (or is killed) and starts again on its store:
        every connection is gone, every question and result is as it was."""
        self.reg = self.new_registry()
        restore(at_once(self.store.load()), self.reg)
        self.model.conns.clear()
        self.expect_sends([])  # a restore tells no one anything

    # ---- taking the registry's output ----------------------------------------

    def take(self) -> list[tuple[frozenset[str], dict[str, Any]]]:
        """Drain the registry and record what reached whom and what ended."""
        sends, ended = sent(self.reg)
        for to, frame in sends:
            for conn in to:
                self.frames_to.setdefault(conn, []).append(frame)
        for req in ended:
            self.ended_seen[req.request_id] += 1
            # What the hub wakes a waiting agent with: the first result.
            self.first_result.setdefault(req.request_id, req.result())
        model_ended = {r.rid for r in self.model.reqs if r.status != "pending"}
        assert {r.request_id for r in ended} <= model_ended, "the registry ended a question the model still has pending"
        return sends

    def expect_sends(self, expected: list[tuple[frozenset[str], dict[str, Any]]]) -> None:
        got = self.take()
        assert canon(got) == canon(expected), f"sent {got}\nexpected {expected}"

    # ---- connections -----------------------------------------------------------

    @rule(user=st.sampled_from(USERS))
    def connect(self, user: str) -> None:
        conn = f"c{next(self.conn_ids)}"
        self.reg.connect(conn, user)
        self.model.conns[conn] = user
        self.conn_user[conn] = user
        self.expect_sends([])

    @precondition(lambda self: self.model.conns)
    @rule(data=st.data())
    def disconnect(self, data: st.DataObject) -> None:
        """An abort and a clean close are the same to the core: the link is gone."""
        conn = data.draw(st.sampled_from(sorted(self.model.conns)), label="conn")
        self.reg.disconnect(conn)
        del self.model.conns[conn]
        self.expect_sends([])

    @precondition(lambda self: self.model.conns)
    @rule(data=st.data(), where=st.sampled_from(SESSIONS + ("*",)))
    def subscribe(self, data: st.DataObject, where: str) -> None:
        target = where
        conn = data.draw(st.sampled_from(sorted(self.model.conns)), label="conn")
        user = self.model.conns[conn]
        owner = self.model.sessions[target].owner if target in self.model.sessions else None
        if target != "*" and owner not in (None, user):
            try:
                self.reg.subscribe(conn, target)
            except Forbidden:
                self.expect_sends([])
                return
            raise AssertionError("subscribe to another user's session was not refused")
        pushed = self.reg.subscribe(conn, target)
        got = self.take()
        if target == "*":
            targets = [s for s, m in self.model.sessions.items() if m.owner == user and self.model.pending_in(s)]
        else:
            targets = [target]
        # Each snapshot is followed by exactly its session's pending questions, oldest first.
        expected: dict[str, list[dict[str, Any]]] = {}
        for sid in targets:
            pending = self.model.pending_in(sid)
            expected[sid] = [
                {"type": "session_snapshot", "sessionId": sid, "payload": {"active": bool(pending), "pending": len(pending)}},
                *({"type": "ask_user_questions", "sessionId": sid, "requestId": r.rid} for r in pending),
            ]
        groups: dict[str, list[dict[str, Any]]] = {}
        current = None
        for to, frame in got:
            assert to == {conn}, f"a re-push went to {to}, not only the subscriber {conn}"
            if frame["type"] == "session_snapshot":
                current = frame["sessionId"]
                assert current not in groups, f"two snapshots of {current}"
                groups[current] = [frame]
            else:
                assert frame["type"] == "ask_user_questions" and current == frame["sessionId"], frame
                req = next(r for r in self.model.reqs if r.rid == frame["payload"]["requestId"])
                assert frame["payload"]["questions"] == QUESTIONS and frame["payload"]["metadata"] == {"n": req.seq}
                groups[current].append({"type": frame["type"], "sessionId": current, "requestId": req.rid})
        assert groups == expected
        assert pushed == sum(len(v) - 1 for v in expected.values())

    # ---- agents ----------------------------------------------------------------

    @rule(
        sid=st.sampled_from(SESSIONS),
        user=st.sampled_from(USERS),
        parent=st.none() | st.sampled_from(SESSIONS),
        key=st.none() | st.sampled_from(["k1", "k2"]),
        timeout=st.sampled_from([None, None, 1.0, 2.5, 0.0, 1e9]),
        require_online=st.booleans(),
        agent=st.sampled_from(AGENTS),
    )
    def ask(
        self, sid: str, user: str, parent: str | None, key: str | None, timeout: float | None, require_online: bool,
        agent: str | None,
    ) -> None:
        self.do_ask(sid, user, parent, key, timeout, require_online, agent)

    @precondition(lambda self: self.model.sessions)
    @rule(data=st.data(), child=st.booleans(), timeout=st.sampled_from([None, 1.0, 2.5]))
    def agent_keeps_asking(self, data: st.DataObject, child: bool, timeout: float | None) -> None:
        """What agents mostly do: ask again in a session they own, or in a
        sub-agent's session under it (so caps and cascades get exercised)."""
        sid = data.draw(st.sampled_from(sorted(self.model.sessions)), label="session")
        owner, agent = self.model.sessions[sid].owner, self.model.sessions[sid].agent
        if child:
            sub = data.draw(st.sampled_from([s for s in SESSIONS if s != sid]), label="child")
            self.do_ask(sub, owner, sid, None, timeout, False, agent)
        else:
            self.do_ask(sid, owner, None, None, timeout, False, agent)

    def do_ask(
        self, sid: str, user: str, parent: str | None, key: str | None, timeout: float | None, require_online: bool,
        agent: str | None = None,
    ) -> None:
        m = self.model
        seq = self.next_rid
        expected_error = self.ask_error(sid, user, parent, key, timeout, require_online, agent)
        # Every other question lets the person add 2 s; every third has a default.
        max_ext = 2.0 if seq % 2 else 0.0
        on_timeout = ANSWERS["one"] if seq % 3 == 0 else None
        call = lambda: self.reg.ask(  # noqa: E731
            sid,
            user,
            QUESTIONS,
            metadata={"n": seq},
            timeout=timeout,
            require_online=require_online,
            parent_session_id=parent,
            idempotency_key=key,
            agent=agent,
            max_extension=max_ext,
            on_timeout=on_timeout,
        )
        if isinstance(expected_error, MReq):  # an idempotent replay
            req, created = call()
            assert not created and req.request_id == expected_error.rid
            self.expect_sends([])
            return
        if expected_error is not None:
            try:
                call()
            except expected_error:
                self.expect_sends([])
                return
            raise AssertionError(f"ask should have raised {expected_error.__name__}")
        req, created = call()
        assert created
        rid = f"r{seq}"
        self.next_rid += 1
        assert req.request_id == rid
        if sid not in m.sessions:
            m.sessions[sid] = MSession(user, agent=agent)
        if parent is not None and m.sessions[sid].parent is None:
            m.sessions.setdefault(parent, MSession(user, agent=agent))
            m.sessions[sid].parent = parent
        mreq = MReq(
            rid, sid, user, seq, self.clock.now + (QUESTION_TIMEOUT if timeout is None else timeout), key, agent,
            self.clock.now, max_ext, 0.0, on_timeout,
        )
        m.reqs.append(mreq)
        assert req.expires_at == mreq.expires_at
        conns = m.conns_of(user)
        got = self.take()
        if not conns:
            assert got == []
            return
        [(to, frame)] = got
        assert to == conns
        assert frame["type"] == "ask_user_questions" and frame["sessionId"] == sid
        assert frame["payload"]["requestId"] == rid and frame["payload"]["questions"] == QUESTIONS

    def ask_error(
        self, sid: str, user: str, parent: str | None, key: str | None, timeout: float | None, online: bool,
        agent: str | None = None,
    ) -> Any:
        """What an ask must do, in the order spec and decisions give: the
        exception it raises, the request it replays, or None (a new one)."""
        m = self.model
        session = m.sessions.get(sid)
        if not m.reaches(sid, agent):
            return NotFound  # before the owner: another agent's session tells nothing
        if session is not None and session.owner != user:
            return SessionOwnerMismatch
        if key is not None and session is not None:
            prior = [r for r in m.live_in(sid) if r.key == key and r.agent == agent]  # keys are per agent
            if prior:
                return prior[-1]
        if parent is not None and not m.reaches(parent, agent):
            return NotFound
        if parent is not None:
            if parent == sid:
                return InvalidRequest
            if session is not None and session.parent not in (None, parent):
                return InvalidRequest
            if parent in m.sessions:
                if m.sessions[parent].owner != user:
                    return SessionOwnerMismatch
                if sid in [parent, *m.ancestors(parent)]:
                    return InvalidRequest
        if online and not m.conns_of(user):
            return UserOffline
        if session is not None and len(m.pending_in(sid)) >= PER_SESSION:
            return TooManyPending
        if len(m.pending()) >= TOTAL:
            return TooManyPending
        if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
            return InvalidRequest
        return None

    @precondition(lambda self: self.model.reqs)
    @rule(
        data=st.data(),
        who=st.sampled_from(["owner", "other", "admin"]),
        kind=st.sampled_from(sorted(ANSWERS)),
        twice=st.booleans(),
    )
    def answer(self, data: st.DataObject, who: str, kind: str, twice: bool) -> None:
        """Any request ever made (pending, ended, forgotten), by its owner,
        another user or an admin, with valid or invalid answers; ``twice``
        resends the same answer, as a tab does after a reconnect."""
        req = data.draw(st.sampled_from(self.model.reqs), label="request")
        user = {"owner": req.user, "admin": None, "other": next(u for u in USERS if u != req.user)}[who]
        answers = ANSWERS[kind] if ANSWERS[kind] is not None else INVALID[kind]
        for attempt in range(2 if twice else 1):
            if req.status != "pending" or user not in (None, req.user):
                expected: Any = NotPending
            elif ANSWERS[kind] is None:
                expected = InvalidAnswer
            else:
                expected = None
            if expected is None:
                self.reg.answer(req.sid, req.rid, answers, user_id=user)
                self.model.end(req, "answered", answers, by=user, via="ws" if user else "admin")
                self.expect_sends([cancelled(req.end_conns, req)] if req.end_conns else [])
            else:
                try:
                    self.reg.answer(req.sid, req.rid, answers, user_id=user)
                except expected:
                    self.expect_sends([])
                else:
                    raise AssertionError(f"answer {kind} by {who} of a {req.status} question should raise {expected.__name__}")

    @precondition(lambda self: self.model.reqs)
    @rule(data=st.data(), who=st.sampled_from(["owner", "other", "admin"]), reason=st.sampled_from([None, "not mine"]))
    def decline(self, data: st.DataObject, who: str, reason: str | None) -> None:
        """Any request ever made, declined by its owner, another user or an admin."""
        req = data.draw(st.sampled_from(self.model.reqs), label="request")
        user = {"owner": req.user, "admin": None, "other": next(u for u in USERS if u != req.user)}[who]
        if req.status != "pending" or user not in (None, req.user):
            try:
                self.reg.decline(req.sid, req.rid, reason, user_id=user)
            except NotPending:
                self.expect_sends([])
                return
            raise AssertionError(f"decline by {who} of a {req.status} question should raise NotPending")
        self.reg.decline(req.sid, req.rid, reason, user_id=user)
        self.model.end(req, "declined", by=user, via="ws" if user else "admin", reason=reason)
        self.expect_sends([cancelled(req.end_conns, req)] if req.end_conns else [])

    @precondition(lambda self: self.model.reqs)
    @rule(data=st.data(), who=st.sampled_from(["owner", "other", "agent"]), seconds=st.sampled_from([0.5, 3.0, 200.0]))
    def extend(self, data: st.DataObject, who: str, seconds: float) -> None:
        """More time: the person within its allowance, the agent up to
        max_timeout plus the allowance from creation."""
        req = data.draw(st.sampled_from(self.model.reqs), label="request")
        user = {"owner": req.user, "agent": None, "other": next(u for u in USERS if u != req.user)}[who]
        expected: Any = None
        if req.status != "pending" or user not in (None, req.user):
            expected = NotPending
        elif user is not None:
            add = min(seconds, req.max_ext - req.extended)
            expected = NotAllowed if add <= 0 else None
        else:
            add = seconds
            if req.expires_at + add > req.created_at + MAX_TIMEOUT + req.max_ext:
                expected = NotAllowed
        if expected is not None:
            try:
                self.reg.extend(req.sid, req.rid, seconds, user_id=user)
            except expected:
                self.expect_sends([])
                return
            raise AssertionError(f"extend by {who} of a {req.status} question should raise {expected.__name__}")
        self.reg.extend(req.sid, req.rid, seconds, user_id=user)
        req.expires_at += add
        if user is not None:
            req.extended += add
        frame = {
            "type": "ask_user_questions_extended",
            "sessionId": req.sid,
            "payload": {"requestId": req.rid, "expiresAt": isotime(req.expires_at)},
        }
        if req.max_ext:  # what is left of the person's allowance, for every tab (whole seconds as integers)
            left = req.max_ext - req.extended
            frame["payload"].update(
                maxExtensionSeconds=int(req.max_ext) if req.max_ext.is_integer() else req.max_ext,
                extensionLeftSeconds=int(left) if left.is_integer() else left,
            )
        conns = self.model.conns_of(req.user)
        self.expect_sends([(conns, frame)] if conns else [])

    @rule(sid=st.sampled_from(SESSIONS + ("nowhere",)), agent=st.sampled_from(AGENTS))
    def cancel_session(self, sid: str, agent: str | None) -> None:
        m = self.model
        if not m.reaches(sid, agent):
            try:
                self.reg.cancel_session(sid, agent)
            except NotFound:
                self.expect_sends([])
                return
            raise AssertionError(f"{agent} cancelled {sid}, another agent's session")
        doomed = [r for s in (m.subtree(sid) if sid in m.sessions else ()) for r in m.pending_in(s)]
        assert self.reg.cancel_session(sid, agent) == len(doomed)
        for req in doomed:
            m.end(req, "cancelled")
        self.expect_sends([cancelled(r.end_conns, r) for r in doomed if r.end_conns])

    # ---- time ------------------------------------------------------------------

    @rule(seconds=st.sampled_from([0.25, 1.0, 2.5, 6.0]))
    def clock_moves(self, seconds: float) -> None:
        """Time passes; nothing happens until the front end's timer fires."""
        self.clock.advance(seconds)
        self.expect_sends([])

    @precondition(lambda self: self.model.pending())
    @rule(data=st.data())
    def clock_reaches_a_deadline(self, data: st.DataObject) -> None:
        req = data.draw(st.sampled_from(self.model.pending()), label="deadline of")
        self.clock.now = max(self.clock.now, req.expires_at)
        self.expect_sends([])

    @precondition(lambda self: any(r.ended_at is not None and r.live for r in self.model.reqs))
    @rule(data=st.data())
    def clock_reaches_a_retention_end(self, data: st.DataObject) -> None:
        retained = [r for r in self.model.reqs if r.ended_at is not None and r.live]
        req = data.draw(st.sampled_from(retained), label="retention of")
        assert req.ended_at is not None
        self.clock.now = max(self.clock.now, req.ended_at + self.model.ttl)
        self.expect_sends([])

    @rule()
    def timer_fires(self) -> None:
        """What the hub's one timer does when it goes off at next_deadline()."""
        m, now = self.model, self.clock.now
        deadline = self.reg.next_deadline()
        due = sorted((r for r in m.pending() if r.expires_at <= now), key=lambda r: (r.expires_at, r.seq))
        retired = [r for r in m.reqs if r.ended_at is not None and r.live and r.ended_at + m.ttl <= now]
        assert (deadline is not None and deadline <= now) == bool(due or retired), (deadline, now, due, retired)
        if deadline is None or deadline > now:
            return
        self.reg.advance()
        for req in due:
            m.end(req, "timeout")
        for req in m.reqs:
            if req.ended_at is not None and req.live and req.ended_at + m.ttl <= now:
                req.forgotten = True
        m.collect()
        got = self.take()
        expected = [cancelled(r.end_conns, r) for r in due if r.end_conns]
        assert got == expected, f"timeouts sent {got}, expected in deadline order {expected}"

    # ---- invariants --------------------------------------------------------------

    @invariant()
    def each_question_ends_exactly_once(self) -> None:
        for req in self.model.reqs:
            assert self.ended_seen[req.rid] == (0 if req.status == "pending" else 1), req

    @invariant()
    def a_waiting_agent_gets_the_first_result_and_it_never_changes(self) -> None:
        for req in self.model.reqs:
            if req.status == "pending":
                continue
            assert self.first_result[req.rid] == req.expected_result()
            kept = self.reg.get(req.sid, req.rid)
            if req.live:
                assert kept is not None and kept.result() == self.first_result[req.rid]
            else:
                assert kept is None, f"{req.rid} outlived its retention"

    @invariant()
    def no_pending_question_disappears_without_ending(self) -> None:
        assert sorted(r.request_id for r in self.reg.pending()) == sorted(r.rid for r in self.model.pending())
        for req in self.model.pending():
            kept = self.reg.get(req.sid, req.rid)
            assert kept is not None and kept.pending
        stats = self.reg.stats()
        ended = stats["answered"] + stats["timedOut"] + stats["cancelled"] + stats["declined"]
        assert stats["asked"] == stats["pending"] + ended
        assert stats["pending"] == len(self.model.pending())

    @invariant()
    def a_pending_question_shows_its_deadline_as_extended(self) -> None:
        for req in self.model.pending():
            kept = self.reg.get(req.sid, req.rid)
            assert kept is not None and kept.expires_at == req.expires_at
            assert kept.ask_payload()["expiresAt"] == isotime(req.expires_at)  # what a re-push carries

    @invariant()
    def sessions_are_owned_as_the_model_says(self) -> None:
        for sid in SESSIONS:
            expected = self.model.sessions[sid].owner if sid in self.model.sessions else None
            assert self.reg.owner(sid) == expected, sid
        assert self.reg.stats()["sessions"] == len(self.model.sessions)

    @invariant()
    def each_agent_reaches_what_the_model_says(self) -> None:
        """Across restarts too: the store keeps each session's agent."""
        for sid in SESSIONS:
            for agent in AGENTS:
                assert self.reg.reaches(sid, agent) == self.model.reaches(sid, agent), (sid, agent)

    @invariant()
    def every_end_reached_each_connection_of_its_user_once(self) -> None:
        got: Counter[tuple[str, str]] = Counter()
        for conn, frames in self.frames_to.items():
            for f in frames:
                if f["type"] == "ask_user_questions_cancelled":
                    got[(f["payload"]["requestId"], conn)] += 1
        expected = Counter((r.rid, c) for r in self.model.reqs for c in r.end_conns)
        assert got == expected

    @invariant()
    def no_event_reaches_another_users_connection(self) -> None:
        owner = {r.rid: r.user for r in self.model.reqs}
        for conn, frames in self.frames_to.items():
            for f in frames:
                rid = (f.get("payload") or {}).get("requestId")
                if rid is not None:
                    assert owner[rid] == self.conn_user[conn], f"{f} reached {conn} of {self.conn_user[conn]}"


TestRegistryModel = RegistryMachine.TestCase
TestRegistryModel.settings = settings(max_examples=scaled(8.0), stateful_step_count=settings.default.stateful_step_count)
