"""The chaos soak: many users with several tabs, agents asking without pause,
links dropped and closed at random, and a ledger that accounts for every
question at the end.

``askd serve`` runs as a real subprocess on 127.0.0.1 with short question
timeouts. Agents ask with ``?wait=`` long-polls and come back with ``GET``
when their own link gives up (an agent's dropped link), and now and then
cancel a session. Tabs answer at random (racing each other and the
timeout), resend unacknowledged answers after a reconnect, and show what
the daemon pushed. A chaos task aborts and closes tabs through the admin
API, and tabs reload themselves. Everything stops by itself after
``seconds``; the ledger then checks that every question ended exactly once,
that its agent saw that end, that no acknowledged answer is missing and
that nothing completed twice.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from askd import tokens
from tests.support.askd_process import Service
from tests.support.redis_server import RedisServer

SECRET = "soak-secret-0123456789abcdef-0123456789"
QUESTION_TIMEOUT = 2.5
QUESTION = "Proceed?"


@dataclass
class Entry:
    """Everything seen about one question."""

    session: str
    user: str
    result: dict[str, Any] | None = None  # the end the agent saw


@dataclass
class TabRecords:
    """What tabs write down (a ``Tab``'s soak has a ledger with these)."""

    # By requestId (a tab may hear of a question before its agent's POST returns):
    sent: dict[str, list[Any]] = field(default_factory=dict)  # every answer any tab sent
    acked: dict[str, list[Any]] = field(default_factory=dict)  # answers whose ack said accepted
    figures: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


@dataclass
class Ledger(TabRecords):
    entries: dict[str, Entry] = field(default_factory=dict)

    def check(self, stats: dict[str, Any]) -> None:
        f = self.figures
        for rid, e in self.entries.items():
            if e.result is None or e.result.get("status") not in ("answered", "timeout", "cancelled"):
                f["lost"] += 1
                self.problems.append(f"{rid}: the agent never saw an end ({e.result})")
                continue
            status = e.result["status"]
            f[status] += 1
            acked = self.acked.get(rid, [])
            if len(acked) > 1:
                f["duplicated"] += 1
                self.problems.append(f"{rid}: {len(acked)} answers were accepted: {acked}")
            if acked and (status != "answered" or e.result.get("answers") != acked[0]):
                f["lost"] += 1
                self.problems.append(f"{rid}: acknowledged answer {acked[0]} missing from {e.result}")
            if status == "answered" and e.result.get("answers") not in self.sent.get(rid, []):
                self.problems.append(f"{rid}: answered with {e.result.get('answers')}, which no tab sent")
            if status == "answered" and not acked:
                f["answered, ack lost with the link"] += 1  # the resend then got not_pending
        unknown = set(self.acked) - set(self.entries)
        if unknown:
            self.problems.append(f"answers accepted for questions no agent asked: {sorted(unknown)[:5]}")
        f["asked"] = len(self.entries)
        # The daemon's own count must agree: each question ended exactly once.
        if stats["asked"] != f["asked"]:
            self.problems.append(f"daemon asked {stats['asked']} questions, agents {f['asked']}")
        if stats["pending"] != 0:
            self.problems.append(f"{stats['pending']} questions still pending at the end")
        for key, ours in (("answered", "answered"), ("timedOut", "timeout"), ("cancelled", "cancelled")):
            if stats[key] != f[ours]:
                self.problems.append(f"daemon counts {stats[key]} {key}, agents saw {f[ours]}")
                f["duplicated" if stats[key] > f[ours] else "lost"] += abs(stats[key] - f[ours])

# What every soak must have seen happen at least once (tests/system/soak/test_soak.py).
EXERCISED = ("asked", "answered", "timeout", "cancelled", "admin aborts", "answers resent after reconnect")


class Soak:
    """``url`` and ``admin_url``: one daemon's, or lists with one per node of
    a cluster: then each agent's requests alternate between the nodes, a
    tab connects to a random node each time, and the chaos orders its
    disconnects through random nodes."""

    def __init__(
        self, url: str | list[str], admin_url: str | list[str], seconds: float, users: int, tabs: int, agents: int, seed: int
    ) -> None:
        self.urls = [url] if isinstance(url, str) else url
        self.admin_urls = [admin_url] if isinstance(admin_url, str) else admin_url
        self.ws_urls = [u.replace("http://", "ws://") + "/ws" for u in self.urls]
        self._pick = random.Random(seed)  # which node (its own, so one node draws what it always drew)
        self.seconds, self.users, self.tabs_per_user, self.agents = seconds, users, tabs, agents
        self.rng = random.Random(seed)
        self.ledger = Ledger()
        self.stop_asking = asyncio.Event()
        self.agents_done = asyncio.Event()
        self.agent_token = tokens.issue(SECRET, "agent")
        self.admin_token = tokens.issue(SECRET, "admin")
        self.tabs: list[Tab] = []

    @property
    def f(self) -> Counter[str]:
        return self.ledger.figures

    def exercised(self) -> bool:
        """Whether the run has seen every kind of event it claims to test."""
        return all(self.f[kind] > 0 for kind in EXERCISED)

    async def run(self) -> Ledger:
        limits = httpx.Limits(max_connections=self.agents + 20, max_keepalive_connections=self.agents + 20)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            self.http = http
            self.tabs = [Tab(self, f"u{u}", t) for u in range(self.users) for t in range(self.tabs_per_user)]
            tab_tasks = [asyncio.create_task(t.run()) for t in self.tabs]
            await asyncio.sleep(0.5)  # let the tabs connect (later ones reconnect anyway)
            chaos = asyncio.create_task(self.chaos())
            agents = [asyncio.create_task(self.agent(i)) for i in range(self.agents)]
            await asyncio.sleep(self.seconds)
            # A loaded machine may not have exercised every kind of end yet
            # (a run of 200 asks saw no cancel): ask on, at most twice as long
            # again, until it has, so the run checks what it claims to.
            extra = 2 * self.seconds
            while extra > 0 and not self.exercised():
                await asyncio.sleep(0.25)
                extra -= 0.25
            self.stop_asking.set()
            await asyncio.wait_for(asyncio.gather(*agents), QUESTION_TIMEOUT * 4 + 60)
            self.agents_done.set()
            await chaos
            # Every question has ended: no tab may still show one (after the
            # last cancelled events have had a moment to arrive).
            await asyncio.sleep(1.0)
            for tab in self.tabs:
                if tab.connected and tab.shown:
                    self.ledger.problems.append(f"{tab.name} still shows ended questions {sorted(tab.shown)}")
            for tab in self.tabs:
                tab.closing = True
            await asyncio.gather(*(t.close() for t in self.tabs))
            await asyncio.wait_for(asyncio.gather(*tab_tasks, return_exceptions=True), 30)
            every = [(await http.get(f"{u}/admin/v1/stats", headers=self.admin_headers)).json() for u in self.admin_urls]
        stats = every[0]
        for other in every[1:]:  # every node counts the whole cluster
            for key in ("asked", "answered", "timedOut", "cancelled", "pending"):
                if other[key] != stats[key]:
                    self.ledger.problems.append(f"{other['node']} counts {other[key]} {key}, {stats['node']} {stats[key]}")
        self.ledger.check(stats)
        return self.ledger

    @property
    def ws_url(self) -> str:
        """Where a tab connects, this time."""
        return self.ws_urls[0] if len(self.ws_urls) == 1 else self._pick.choice(self.ws_urls)

    def node(self, turn: Iterator[int]) -> str:
        """The node an agent's next request goes to (its turns alternate)."""
        return self.urls[next(turn) % len(self.urls)]

    @property
    def agent_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.agent_token}"}

    @property
    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token}"}

    # ---- agents -----------------------------------------------------------------

    async def agent(self, n: int) -> None:
        rng = random.Random(self.rng.random())
        turn = itertools.count(n)
        while not self.stop_asking.is_set():
            user = f"u{rng.randrange(self.users)}"
            session = f"{user}-s{rng.randrange(3)}"
            body: dict[str, Any] = {"userId": user, "questions": [{"question": QUESTION, "options": [{"label": "yes"}, {"label": "no"}]}]}
            if rng.random() < 0.2:
                body["timeoutSeconds"] = rng.choice([0.5, 1.0])
            if rng.random() < 0.1:
                body["parentSessionId"] = f"{user}-root"
            wait = rng.choice([0, 0.5, 2, 10])
            try:
                r = await self.http.post(
                    f"{self.node(turn)}/v1/sessions/{session}/questions", params={"wait": wait}, json=body, headers=self.agent_headers
                )
            except httpx.HTTPError as err:
                self.ledger.problems.append(f"ask failed: {err!r}")
                continue
            if r.status_code == 429:
                await asyncio.sleep(0.1)
                continue
            if r.status_code not in (200, 201):
                self.ledger.problems.append(f"ask: {r.status_code} {r.text}")
                continue
            rid = r.json()["requestId"]
            entry = self.ledger.entries[rid] = Entry(session, user)
            if r.status_code == 200:
                entry.result = r.json()
                continue
            await self.await_end(rid, entry, rng, turn)

    async def await_end(self, rid: str, entry: Entry, rng: random.Random, turn: Iterator[int]) -> None:
        while True:
            if rng.random() < 0.05:
                cancel = f"{entry.user}-root" if rng.random() < 0.3 else entry.session
                await self.http.post(f"{self.node(turn)}/v1/sessions/{cancel}/cancel", headers=self.agent_headers)
                self.f["session cancels"] += 1
            # Some agents' own links give up early: they come back and read again.
            client_timeout = rng.choice([0.3, 30, 30])
            try:
                r = await self.http.get(
                    f"{self.node(turn)}/v1/sessions/{entry.session}/questions/{rid}",
                    params={"wait": rng.choice([1, 5])},
                    headers=self.agent_headers,
                    timeout=client_timeout,
                )
            except httpx.TimeoutException:
                self.f["agent links dropped"] += 1
                continue
            body = r.json()
            if r.status_code != 200:
                entry.result = body
                return
            if body["status"] != "pending":
                entry.result = body
                return

    # ---- chaos ------------------------------------------------------------------

    async def chaos(self) -> None:
        rng = random.Random(self.rng.random())
        while not self.agents_done.is_set():
            await asyncio.sleep(rng.uniform(0.02, 0.15))
            mode = "abort" if rng.random() < 0.7 else "close"
            target: dict[str, Any] = {"userId": f"u{rng.randrange(self.users)}"}
            if rng.random() < 0.1:
                target = {"sessionId": f"u{rng.randrange(self.users)}-s0"}
            admin_url = self.admin_urls[0] if len(self.admin_urls) == 1 else self._pick.choice(self.admin_urls)
            r = await self.http.post(f"{admin_url}/admin/v1/disconnect", json={**target, "mode": mode}, headers=self.admin_headers)
            self.f[f"admin {mode}s"] += r.json()["disconnected"]


class Tab:
    """One browser tab: shows what is pushed, answers some, reconnects."""

    def __init__(self, soak: Soak, user: str, n: int) -> None:
        self.soak, self.user, self.name = soak, user, f"{user}/tab{n}"
        self.rng = random.Random(soak.rng.random())
        self.shown: set[str] = set()
        self.sessions: dict[str, str] = {}  # requestId -> sessionId
        self.unacked: dict[str, tuple[str, str, dict[str, Any]]] = {}  # frame id -> (rid, session, answers)
        self.ended_here: Counter[str] = Counter()
        self.conn: Any = None
        self.connected = False
        self.closing = False
        self.sent = 0

    async def run(self) -> None:
        token = tokens.issue(SECRET, "user", self.user)
        while not self.closing:
            try:
                async with websockets.connect(self.soak.ws_url + f"?token={token}", open_timeout=10, max_queue=None) as conn:
                    self.conn = conn
                    await self.session(conn)
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError):
                pass
            self.connected = False
            self.conn = None
            if not self.closing:
                await asyncio.sleep(self.rng.uniform(0.01, 0.3))

    async def session(self, conn: Any) -> None:
        if self.closing:
            return  # connected while the soak was ending
        # A fresh page: forget what was shown, rebuild from the replay.
        self.shown.clear()
        self.ended_here.clear()
        await conn.send(json.dumps({"type": "subscribe", "sessionId": "*", "id": "sub"}))
        self.connected = True
        resent = False
        reload_at = time.monotonic() + self.rng.uniform(2, 20)
        while True:
            timeout = max(0.01, reload_at - time.monotonic())
            try:
                raw = await asyncio.wait_for(conn.recv(), timeout)
            except asyncio.TimeoutError:
                if self.closing:
                    return
                if self.rng.random() < 0.5:
                    self.soak.f["tab reloads"] += 1
                    await conn.close()  # a reload: a clean close, then a new page
                    return
                reload_at = time.monotonic() + self.rng.uniform(2, 20)
                continue
            frame = json.loads(raw)
            kind = frame["type"]
            if kind == "ask_user_questions":
                rid = frame["payload"]["requestId"]
                self.shown.add(rid)
                self.sessions[rid] = frame["sessionId"]
                if self.rng.random() < 0.4:
                    asyncio.get_running_loop().call_later(self.rng.uniform(0.05, 3.0), self.answer, conn, rid)
            elif kind == "ask_user_questions_cancelled":
                rid = frame["payload"]["requestId"]
                self.ended_here[rid] += 1
                if self.ended_here[rid] > 1:
                    self.soak.f["duplicated"] += 1
                    self.soak.ledger.problems.append(f"{self.name}: {rid} ended twice on one connection")
                self.shown.discard(rid)
            elif kind == "ack" and frame.get("id") == "sub" and not resent:
                resent = True
                # Answers sent before the link dropped, never acknowledged: resend.
                for fid, (rid, session, answers) in list(self.unacked.items()):
                    del self.unacked[fid]
                    self.soak.f["answers resent after reconnect"] += 1
                    self.send_answer(conn, rid, session, answers)
            elif kind == "ack" and frame.get("id") in self.unacked:
                rid, _, answers = self.unacked.pop(frame["id"])
                if frame["payload"].get("accepted"):
                    self.soak.ledger.acked.setdefault(rid, []).append(answers)
                    self.soak.f["answers accepted"] += 1
                else:
                    self.soak.f["answers refused (not pending)"] += 1
            elif kind == "error":
                self.soak.ledger.problems.append(f"{self.name}: error frame {frame}")

    def answer(self, conn: Any, rid: str) -> None:
        if rid in self.shown and conn is self.conn:
            self.send_answer(conn, rid, self.sessions[rid], {QUESTION: f"{self.name}#{self.sent}"})

    def send_answer(self, conn: Any, rid: str, session: str, answers: dict[str, Any]) -> None:
        self.sent += 1
        fid = f"a{self.sent}"
        self.unacked[fid] = (rid, session, answers)
        self.soak.ledger.sent.setdefault(rid, []).append(answers)
        frame = {"type": "ask_user_questions_result", "sessionId": session, "requestId": rid, "answers": answers, "id": fid}
        # Now and then the link fails right after the answer left, before its ack.
        drop = self.rng.random() < 0.15
        asyncio.ensure_future(self._send(conn, json.dumps(frame), drop))

    async def _send(self, conn: Any, text: str, drop: bool) -> None:
        try:
            await conn.send(text)
        except websockets.ConnectionClosed:
            return  # stays unacked: resent after the reconnect
        if drop and not self.closing:
            self.soak.f["tab aborts after answering"] += 1
            conn.transport.abort()

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


# ---- the daemon as a subprocess ----------------------------------------------------


def soak_service(state_dir: Path, *args: str, **settings: str) -> Service:
    """``askd serve`` on 127.0.0.1, free ports, tokens signed with SECRET."""
    return Service(
        state_dir,
        *args,
        env={
            "ASKD_AUTH__SECRET": SECRET,
            "ASKD_RESULT_TTL_SECONDS": "300",
            "ASKD_LOG__LEVEL": "warning",
            "ASKD_LIMITS__MAX_CONNECTIONS_PER_USER": "64",
            "ASKD_LIMITS__MAX_CONNECTIONS_PER_ADDRESS": "0",  # every tab and agent is 127.0.0.1
            **settings,
        },
    )


async def soak(
    seconds: float, users: int = 200, tabs: int = 3, agents: int = 120, seed: int = 1, nodes: int = 1
) -> tuple[Ledger, list[str], int]:
    """Run one soak, against one askd or ``nodes`` askd on one Redis (its own
    redis-server, no persistence); returns the ledger, the daemons' error log
    lines and their exit code (the first that is not 0)."""
    with tempfile.TemporaryDirectory(prefix="askd-soak-") as tmp:
        redis = RedisServer(Path(tmp) / "redis").start() if nodes > 1 else None
        svcs = [
            soak_service(
                Path(tmp) / f"node-{i}", "--question-timeout", str(QUESTION_TIMEOUT),
                **({"ASKD_STORE": redis.url, "ASKD_NODE_ID": f"node-{i}"} if redis else {}),
            )
            for i in range(nodes)
        ]
        try:
            await asyncio.gather(*(svc.start() for svc in svcs))
            run = Soak([svc.url for svc in svcs], [svc.admin_url for svc in svcs], seconds, users, tabs, agents, seed)
            ledger = await run.run()
            codes = [await svc.stop() for svc in svcs]
            errors = [line for svc in svcs if svc.proc is not None for line in svc.proc.error_lines()]
            return ledger, errors, next((c for c in codes if c), 0)
        finally:
            for svc in svcs:
                await svc.close()
            if redis is not None:
                redis.stop()


def report(ledger: Ledger, seconds: float, users: int, tabs: int, nodes: int = 1) -> str:
    f = ledger.figures
    disconnects = f["admin aborts"] + f["admin closes"] + f["tab reloads"] + f["tab aborts after answering"]
    lines = [
        f"askd chaos soak: {seconds:g} s, {users} users x {tabs} tabs" + (f", {nodes} nodes on one Redis" if nodes > 1 else ""),
        f"  questions asked:        {f['asked']}",
        f"  answered:               {f['answered']} (acks accepted {f['answers accepted']}, ack lost with the link "
        f"{f['answered, ack lost with the link']}; not_pending acks {f['answers refused (not pending)']})",
        f"  timeouts:               {f['timeout']}",
        f"  cancelled:              {f['cancelled']} ({f['session cancels']} session cancels)",
        f"  disconnects injected:   {disconnects} (admin aborts {f['admin aborts']}, admin closes {f['admin closes']}, "
        f"reloads {f['tab reloads']}, aborts right after answering {f['tab aborts after answering']})",
        f"  answers resent:         {f['answers resent after reconnect']}",
        f"  agent links dropped:    {f['agent links dropped']}",
        f"  lost: {f['lost']}",
        f"  duplicated: {f['duplicated']}",
    ]
    return "\n".join(lines)
