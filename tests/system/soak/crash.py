"""The crash soak: agents ask (each ask with its own Idempotency-Key),
withdraw and cancel, tabs answer, while askd is killed with SIGKILL every
few seconds and started again on the same port and store.

A ledger keeps what askd acknowledged: an ask's 201/200, an answer's ack
``{"accepted": true}``, a withdraw's or a cancel's 200. After every restart
a read of every acknowledged ask must find it, every accepted answer must
be its result with exactly those answers, a withdrawn question must read as
the withdraw said, a cancelled or expired one must have ended. Over the
whole run no question is answered twice (a second answer after a restart
gets ``not_pending``) and no Idempotency-Key names two questions. Agents
that retry an ask through a crash do it with the same key, as
``AgentClient`` does; some wait with ``AsyncAgentClient.wait`` and ride
through the crashes, and what they return must agree with the ledger.

Reuses the chaos soak's ``Tab`` (answers, resends after reconnects, reloads).
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import websockets

from askd import tokens
from askd.client import AsyncAgentClient, QuestionLost, RetryPolicy
from askd.client.errors import AskdClientError
from tests.support.askd_process import Service
from tests.system.soak.chaos import QUESTION, SECRET, Tab, TabRecords, soak_service

QUESTION_TIMEOUT = 10.0  # the daemon's default; some asks set SHORT, to expire while askd is down
SHORT = (1.0, 2.0)
EXPIRY_SLACK = 1.0  # a question this long past its expiresAt must have ended
# The session tree of every user: u-c0 and u-c1 below u-root, u-g below u-c0.
PARENT = {"c0": "root", "c1": "root", "g": "c0"}
SESSIONS = ["s0", "s1", "c0", "c1", "g"]
RETRY = RetryPolicy(retry_for=30, backoff_cap=0.5)


def below(session: str) -> list[str]:
    """The session and every session under it (short names)."""
    out = [session]
    for child, parent in PARENT.items():
        if parent == session:
            out += below(child)
    return out


@dataclass
class Ask:
    session: str
    user: str
    key: str
    expires_at: float  # 0 when its acknowledgement was already an end


@dataclass
class CrashLedger(TabRecords):
    asked: dict[str, Ask] = field(default_factory=dict)  # by requestId
    keys: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> requestId
    by_session: dict[str, list[str]] = field(default_factory=dict)  # requestIds, acknowledged
    withdrawn: dict[str, dict[str, Any]] = field(default_factory=dict)  # requestId -> the withdraw's 200 body
    cancelled: set[str] = field(default_factory=set)  # requestIds a cancel's 200 covered
    agents_saw: dict[str, dict[str, Any]] = field(default_factory=dict)  # ends AsyncAgentClient.wait returned
    downtimes: list[tuple[float, float]] = field(default_factory=list)
    readbacks: list[float] = field(default_factory=list)  # seconds each restart's read-back took

    def acknowledge(self, key: str, body: dict[str, Any], session: str, user: str) -> str:
        rid: str = body["requestId"]
        prior = self.keys.setdefault(key, rid)
        if prior != rid:
            self.figures["duplicated"] += 1
            self.problems.append(f"Idempotency-Key {key} named {prior}, then {rid}")
        if rid not in self.asked:
            expires = _epoch(body["expiresAt"]) if body["status"] == "pending" else 0.0
            self.asked[rid] = Ask(session, user, key, expires)
            self.by_session.setdefault(session, []).append(rid)
        return rid

    def expected(self, rid: str) -> dict[str, Any]:
        """What a read of ``rid`` must show, from what was acknowledged so far
        (taken before the read is sent)."""
        ask, acked = self.asked[rid], self.acked.get(rid)
        return {
            "answers": acked[0] if acked else None,
            "withdrawn": self.withdrawn.get(rid),
            "ended": rid in self.cancelled or time.time() > ask.expires_at + EXPIRY_SLACK,
        }

    def check(self, rid: str, r: httpx.Response, expected: dict[str, Any]) -> dict[str, Any] | None:
        """Check one read against ``expected``; returns the result read."""
        f = self.figures
        f["reads checking the ledger"] += 1
        if r.status_code != 200:
            f["lost"] += 1
            self.problems.append(f"{rid}: acknowledged, then read {r.status_code} {r.text}")
            return None
        body: dict[str, Any] = r.json()
        status = body["status"]
        if expected["answers"] is not None and (status != "answered" or body.get("answers") != expected["answers"]):
            f["lost"] += 1
            self.problems.append(f"{rid}: accepted answer {expected['answers']} missing from {body}")
        if expected["withdrawn"] is not None and body != expected["withdrawn"]:
            f["lost"] += 1
            self.problems.append(f"{rid}: withdrawn as {expected['withdrawn']}, now {body}")
        if expected["ended"] and status == "pending":
            f["lost"] += 1
            self.problems.append(f"{rid}: cancelled or expired, yet still pending")
        if status == "answered" and body.get("answers") not in self.sent.get(rid, []):
            self.problems.append(f"{rid}: answered with {body.get('answers')}, which no tab sent")
        return body

    def check_once_each(self) -> None:
        for rid, acked in self.acked.items():
            if len(acked) > 1:
                self.figures["duplicated"] += 1
                self.problems.append(f"{rid}: {len(acked)} answers were accepted: {acked}")


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class CrashSoak:
    """The load, the crashes and the ledger. ``rng``, ``ledger``, ``f`` and
    ``ws_url`` are what ``Tab`` uses of its soak."""

    def __init__(
        self, svc: Service, seconds: float, users: int, tabs: int, agents: int, seed: int, kill_every: tuple[float, float], min_kills: int = 0
    ) -> None:
        self.svc, self.seconds, self.users, self.agents, self.kill_every = svc, seconds, users, agents, kill_every
        self.min_kills = min_kills
        self.url = svc.url
        self.ws_url = f"ws://127.0.0.1:{svc.port}/ws"
        self.rng = random.Random(seed)
        self.ledger = CrashLedger()
        self.stop_asking = asyncio.Event()
        self.token = tokens.issue(SECRET, "agent")
        self.headers = {"Authorization": f"Bearer {self.token}"}
        self.tabs = [Tab(self, f"u{u}", t) for u in range(users) for t in range(tabs)]  # type: ignore[arg-type]
        self.waiters: set[asyncio.Task[None]] = set()

    @property
    def f(self) -> Any:
        return self.ledger.figures

    async def run(self) -> CrashLedger:
        async with httpx.AsyncClient(timeout=10) as http, AsyncAgentClient(self.url, self.token, retry=RETRY) as lib:
            self.http, self.lib = http, lib
            tab_tasks = [asyncio.create_task(t.run()) for t in self.tabs]
            agents = [asyncio.create_task(self.agent(i)) for i in range(self.agents)]
            crasher = asyncio.create_task(self.crasher())
            await asyncio.sleep(self.seconds)
            # On a loaded machine each read-back takes longer and the kills
            # come further apart: the load goes on until min_kills of them.
            while self.f["kill -9"] < self.min_kills and not crasher.done():
                await asyncio.sleep(0.1)
            self.stop_asking.set()
            await asyncio.gather(*agents)
            await crasher
            deadline = time.monotonic() + 5  # the last acks reach their tabs (a resend may be needed)
            while any(t.unacked for t in self.tabs) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            for tab in self.tabs:
                tab.closing = True
            await asyncio.gather(*(t.close() for t in self.tabs))
            await asyncio.wait_for(asyncio.gather(*tab_tasks, return_exceptions=True), 30)
            self.f["agents still waiting at the end"] = len(self.waiters)
            for task in list(self.waiters):
                task.cancel()
            # One last crash, then everything is read back.
            ended = await self.crash_and_verify(final=True)
            await self.second_answers(ended)
        self.ledger.check_once_each()
        return self.ledger

    # ---- crashes ------------------------------------------------------------

    async def crasher(self) -> None:
        """Kill askd 2 to 4 s (``kill_every``) after it started, or once the
        read-back after the last restart is done, if that took longer."""
        rng = random.Random(self.rng.random())
        started = time.time()
        while not self.stop_asking.is_set():  # wait_for with no time left never looks at the event
            try:
                await asyncio.wait_for(self.stop_asking.wait(), max(0.0, started + rng.uniform(*self.kill_every) - time.time()))
            except asyncio.TimeoutError:
                await self.crash_and_verify()
                started = self.ledger.downtimes[-1][1]

    async def crash_and_verify(self, final: bool = False) -> dict[str, dict[str, Any]]:
        down = time.time()
        await self.svc.kill()
        self.f["kill -9"] += 1
        await asyncio.sleep(self.rng.uniform(0, 0.5))  # down a little longer, now and then
        await self.svc.start()
        self.ledger.downtimes.append((down, time.time()))
        return await self.verify(final)

    async def verify(self, final: bool) -> dict[str, dict[str, Any]]:
        """Read back every acknowledged ask; returns the results read."""
        rids = list(self.ledger.asked)
        gate = asyncio.Semaphore(16)
        results: dict[str, dict[str, Any]] = {}

        async def read(rid: str) -> None:
            ask = self.ledger.asked[rid]
            async with gate:
                expected = self.ledger.expected(rid)
                try:
                    r = await self.http.get(f"{self.url}/v1/sessions/{ask.session}/questions/{rid}", headers=self.headers)
                except httpx.TransportError as err:
                    self.ledger.problems.append(f"{rid}: read failed after a restart: {err!r}")
                    return
            body = self.ledger.check(rid, r, expected)
            if body is not None:
                results[rid] = body

        began = time.monotonic()
        await asyncio.gather(*(read(rid) for rid in rids))
        self.ledger.readbacks.append(time.monotonic() - began)
        self.f["restarts checked"] += 1
        if final:
            self.final_figures(results)
        return results

    def final_figures(self, results: dict[str, dict[str, Any]]) -> None:
        f, ledger = self.f, self.ledger
        for rid, body in results.items():
            f[body["status"]] += 1
            ask = ledger.asked[rid]
            if body["status"] == "timeout" and any(a <= ask.expires_at <= b for a, b in ledger.downtimes):
                f["deadline passed while askd was down"] += 1
            saw = ledger.agents_saw.get(rid)
            if saw is not None and saw != body:
                ledger.problems.append(f"{rid}: an agent returned {saw}, askd now says {body}")

    async def second_answers(self, results: dict[str, dict[str, Any]], most: int = 40) -> None:
        """Answer again some answered questions, as their users: each must
        be refused (not_pending) and change nothing."""
        answered = [rid for rid, body in results.items() if body["status"] == "answered"][:most]
        conns: dict[str, Any] = {}
        try:
            for rid in answered:
                ask = self.ledger.asked[rid]
                if ask.user not in conns:
                    token = tokens.issue(SECRET, "user", ask.user)
                    conns[ask.user] = await websockets.connect(self.ws_url, additional_headers={"Authorization": f"Bearer {token}"})
                conn = conns[ask.user]
                await conn.send(json.dumps({"type": "ask_user_questions_result", "sessionId": ask.session, "requestId": rid, "answers": {QUESTION: "a second answer"}, "id": rid}))
                while (frame := json.loads(await asyncio.wait_for(conn.recv(), 10)))["type"] != "ack" or frame.get("id") != rid:
                    pass  # a `cancelled` event of some other question's timeout
                if frame["payload"] == {"accepted": False, "reason": "not_pending"}:
                    self.f["second answers refused"] += 1
                else:
                    self.f["duplicated"] += 1
                    self.ledger.problems.append(f"{rid}: a second answer got {frame}")
                r = await self.http.get(f"{self.url}/v1/sessions/{ask.session}/questions/{rid}", headers=self.headers)
                if r.json() != results[rid]:
                    self.ledger.problems.append(f"{rid}: a refused second answer changed {results[rid]} into {r.json()}")
        finally:
            for conn in conns.values():
                await conn.close()

    # ---- agents -------------------------------------------------------------

    async def agent(self, n: int) -> None:
        rng = random.Random(self.rng.random())
        mine: list[str] = []
        while not self.stop_asking.is_set():
            await asyncio.sleep(rng.uniform(0.05, 0.4))
            user = f"u{rng.randrange(self.users)}"
            short = rng.choice(SESSIONS)
            session = f"{user}-{short}"
            body: dict[str, Any] = {"userId": user, "questions": [{"question": QUESTION, "options": [{"label": "yes"}, {"label": "no"}]}]}
            if short in PARENT:
                body["parentSessionId"] = f"{user}-{PARENT[short]}"
            if rng.random() < 0.25:
                body["timeoutSeconds"] = rng.choice(SHORT)
            key = uuid.uuid4().hex
            rid = await self.ask(session, user, body, key)
            if rid is None:
                continue
            mine.append(rid)
            if rng.random() < 0.1:
                await self.replay(session, body, key, rid)
            if rng.random() < 0.15 and len(self.waiters) < 10:
                task = asyncio.create_task(self.wait(session, rid))
                self.waiters.add(task)
                task.add_done_callback(self.waiters.discard)
            if rng.random() < 0.08:
                await self.withdraw(mine[rng.randrange(len(mine))])
            if rng.random() < 0.03:
                await self.cancel(user, rng.choice(["root", *SESSIONS]))

    async def ask(self, session: str, user: str, body: dict[str, Any], key: str) -> str | None:
        """POST until askd acknowledges it, the same key every time (as
        AgentClient retries); None if it refused the ask."""
        url, headers = f"{self.url}/v1/sessions/{session}/questions", {**self.headers, "Idempotency-Key": key}
        deadline = time.monotonic() + 30
        failed = 0
        while True:
            try:
                r = await self.http.post(url, json=body, headers=headers)
                if r.status_code < 500:
                    break
            except httpx.TransportError:
                pass
            failed += 1
            if time.monotonic() > deadline:
                self.ledger.problems.append(f"an ask got no answer for 30 s ({key})")
                return None
            await asyncio.sleep(0.1)
        if r.status_code == 429:
            self.f["asks refused (too many pending)"] += 1
            return None
        if r.status_code not in (200, 201):
            self.ledger.problems.append(f"ask: {r.status_code} {r.text}")
            return None
        self.f["asks acknowledged"] += 1
        if failed:
            self.f["asks retried through a crash"] += 1
            if r.headers.get("Idempotent-Replayed") == "true":
                self.f["asks askd had kept, replayed after a crash"] += 1
        return self.ledger.acknowledge(key, r.json(), session, user)

    async def replay(self, session: str, body: dict[str, Any], key: str, rid: str) -> None:
        """Ask again with the same key: the same question, nothing new."""
        try:
            r = await self.http.post(f"{self.url}/v1/sessions/{session}/questions", json=body, headers={**self.headers, "Idempotency-Key": key})
        except httpx.TransportError:
            return
        if r.status_code >= 500:
            return
        self.f["deliberate replays"] += 1
        if r.status_code not in (200, 201) or r.json()["requestId"] != rid or r.headers.get("Idempotent-Replayed") != "true":
            self.f["duplicated"] += 1
            self.ledger.problems.append(f"{rid}: a replay of its key got {r.status_code} {r.headers} {r.text}")

    async def withdraw(self, rid: str) -> None:
        ask = self.ledger.asked[rid]
        try:
            r = await self.http.delete(f"{self.url}/v1/sessions/{ask.session}/questions/{rid}", headers=self.headers)
        except httpx.TransportError:
            return
        if r.status_code == 200:
            self.ledger.withdrawn[rid] = r.json()
            self.f["withdraws acknowledged"] += 1
        elif r.status_code < 500:
            self.f["lost"] += 1
            self.ledger.problems.append(f"{rid}: withdraw got {r.status_code} {r.text}")

    async def cancel(self, user: str, short: str) -> None:
        covered = [rid for s in below(short) for rid in self.ledger.by_session.get(f"{user}-{s}", [])]
        try:
            r = await self.http.post(f"{self.url}/v1/sessions/{user}-{short}/cancel", headers=self.headers)
        except httpx.TransportError:
            return
        if r.status_code == 200:
            self.ledger.cancelled.update(covered)
            self.f["cancels acknowledged"] += 1
            self.f["questions cancels covered"] += len(covered)

    async def wait(self, session: str, rid: str) -> None:
        """An agent blocked in AsyncAgentClient.wait, riding through crashes."""
        try:
            result = await self.lib.wait(session, rid)
        except QuestionLost:
            self.f["lost"] += 1
            self.ledger.problems.append(f"{rid}: AsyncAgentClient.wait lost it")
        except AskdClientError as err:
            self.ledger.problems.append(f"{rid}: AsyncAgentClient.wait failed: {err}")
        else:
            self.ledger.agents_saw[rid] = result.raw
            self.f["AsyncAgentClient waits that returned an end"] += 1


async def crash_soak(
    seconds: float, users: int = 20, tabs: int = 2, agents: int = 10, seed: int = 1, kill_every: tuple[float, float] = (2.0, 4.0),
    min_kills: int = 0,
) -> tuple[CrashLedger, list[str], int]:
    """Run one crash soak (``seconds`` of load, longer if needed for
    ``min_kills`` kills under load); returns the ledger, every process's
    error log lines and the exit code of the clean stop at the end."""
    with tempfile.TemporaryDirectory(prefix="askd-crash-soak-") as tmp:
        svc = soak_service(Path(tmp) / "state", "--question-timeout", str(QUESTION_TIMEOUT), ASKD_RESULT_TTL_SECONDS="3600")
        try:
            await svc.start()
            ledger = await CrashSoak(svc, seconds, users, tabs, agents, seed, kill_every, min_kills).run()
            code = await svc.stop()
            return ledger, [line for p in svc.processes for line in p.error_lines()], code
        finally:
            await svc.close()


def crash_report(ledger: CrashLedger, seconds: float) -> str:
    f = ledger.figures
    down = sum(b - a for a, b in ledger.downtimes)
    # Up from a start to the next kill, under load (not counting the last kill, once the load has stopped).
    ups = [b[0] - a[1] for a, b in zip(ledger.downtimes[:-1], ledger.downtimes[1:-1])] or [0.0]
    reads = ledger.readbacks or [0.0]
    lines = [
        f"askd crash soak: {seconds:g} s, kill -9 {f['kill -9']} times (down {down:.1f} s in all; under load up "
        f"{sum(ups) / len(ups):.1f} s between kills on average, at most {max(ups):.1f} s)",
        f"  read-back after each restart: {f['restarts checked']} of them, {sum(reads) / len(reads):.1f} s on average, "
        f"at most {max(reads):.1f} s ({f['reads checking the ledger']} reads)",
        f"  asks acknowledged:      {f['asks acknowledged']} ({len(ledger.asked)} questions; retried through a crash "
        f"{f['asks retried through a crash']}, of which askd had kept and replayed "
        f"{f['asks askd had kept, replayed after a crash']}; deliberate replays {f['deliberate replays']})",
        f"  answers accepted:       {f['answers accepted']} (not_pending acks {f['answers refused (not pending)']}, "
        f"resent after a reconnect {f['answers resent after reconnect']}; second answers after the last crash refused "
        f"{f['second answers refused']})",
        f"  withdraws acknowledged: {f['withdraws acknowledged']}; cancels {f['cancels acknowledged']} "
        f"(covering {f['questions cancels covered']} questions)",
        f"  at the end:             answered {f['answered']}, timeout {f['timeout']} (deadline passed while askd was down "
        f"{f['deadline passed while askd was down']}), cancelled {f['cancelled']}, pending {f['pending']}",
        f"  agents riding through:  {f['AsyncAgentClient waits that returned an end']} AsyncAgentClient waits returned",
        f"  lost: {f['lost']}",
        f"  duplicated: {f['duplicated']}",
    ]
    return "\n".join(lines)
