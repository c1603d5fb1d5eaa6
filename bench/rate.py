"""B4, asks per second: an open-loop stream of asks at a given rate, each
answered (or approved: ``bench/cases.py``) by its connected users as soon
as it arrives. The latency of one ask runs from the moment it was due to
the ``ack`` of the reply that ended it (push, reply and ack all inside). A
step passes while p99 stays under the limit and every ask of the step
completes.

``Load`` holds one server's tabs and agents and runs steps; ``rate`` climbs
a ladder of rates (B6) and its figure is the highest rate that passed;
``bench/search.py`` searches for that rate instead (B4)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

from bench.cases import PLAIN, Case, ended_by
from bench.common import CONNECT_CONCURRENCY, bounded, pct, settle
from bench.proc import Server
from bench.wire import HttpClient, WsClient, http_connect, ws_connect

P99_LIMIT_MS = 100.0
DRAIN_SECONDS = 5.0
# Each Load's sessions are its own: a session belongs to whom it was first
# asked of, and several loads (a search, then a common rate) may share a server.
_LOADS = itertools.count()


class Load:
    """One server under B4's load: ``users`` tabs that reply to every ask
    pushed to them, ``agents`` keep-alive connections posting the asks."""

    def __init__(self, server: Server, users: int = 100, agents: int = 64, p99_limit_ms: float = P99_LIMIT_MS, case: Case = PLAIN) -> None:
        self.server, self.users, self.agents, self.case = server, users, agents, case
        self.p99_limit_ms = p99_limit_ms
        self.due: dict[str, float] = {}  # session id -> when its ask was due
        self.done: dict[str, float] = {}
        self.seq = 0
        n = next(_LOADS)
        self.prefix = f"b4-{n}-" if case is PLAIN else f"b4-{case.name}-{n}-"
        self.inflight = 0
        self.tabs: list[WsClient] = []
        self.workers: list[asyncio.Task[None]] = []
        self.agents_http: list[tuple[int, HttpClient]] = []

    def _on_frame(self, tab: WsClient, frame: bytes) -> None:
        if frame.startswith(b'{"type":"ask_user_questions",'):
            ev = json.loads(frame)
            sid = ev["sessionId"]
            tab.send(self.case.reply(sid, ev["payload"]["requestId"], sid))
        elif frame.startswith(b'{"type":"ack"'):
            sid = ended_by(frame)
            if sid is not None:
                self.done[sid] = time.perf_counter()

    async def __aenter__(self) -> Load:
        server, users = self.server, self.users
        self.tabs = await bounded(
            [lambda k=k: ws_connect(server.tab_port(k), server.user_token(f"u-b4-{k}"), self._on_frame) for k in range(users)],
            CONNECT_CONCURRENCY,
        )
        # Ask k goes to user k (and, with a quorum, the next ones as well).
        self.bodies = [self.case.body([f"u-b4-{(k + j) % users}" for j in range(self.case.approvers)]) for k in range(users)]
        # The agents are spread evenly over the ports asks go to (one server:
        # all on one), one queue per port: user k's asks go to agent_port(k).
        ports = list(dict.fromkeys(server.agent_port(k) for k in range(users)))
        self.queues: dict[int, asyncio.Queue[tuple[str, bytes]]] = {port: asyncio.Queue() for port in ports}
        self.agents_http = [(port, await http_connect(port)) for port in ports for _ in range(max(1, self.agents // len(ports)))]
        self.workers = [asyncio.create_task(self._agent(self.queues[port], h)) for port, h in self.agents_http]
        return self

    async def _agent(self, queue: asyncio.Queue[tuple[str, bytes]], http: HttpClient) -> None:
        while True:
            sid, body = await queue.get()
            self.inflight += 1
            status, reply = await http.request("POST", f"/v1/sessions/{sid}/questions", self.server.agent_auth, body)
            self.inflight -= 1
            # 200: answered before the reply left. On a shared store the push
            # goes out as the node applies the stream, before the ask's reply.
            if status not in (200, 201):
                raise RuntimeError(f"ask got HTTP {status}: {reply[:300]!r}")

    async def __aexit__(self, *exc: Any) -> None:
        for w in self.workers:
            w.cancel()
        await asyncio.gather(*self.workers, return_exceptions=True)
        for _, h in self.agents_http:
            h.close()
        for t in self.tabs:
            t.abort()
        await asyncio.sleep(0)  # the sockets close on the loop's next turn, not at a server's stop (its 2 s grace)

    async def quiet(self) -> None:
        """Drop the asks a failed step left unsent and wait for those in
        flight, so that the next step offers only its own rate."""
        for q in self.queues.values():
            while not q.empty():
                q.get_nowait()
        limit = time.perf_counter() + DRAIN_SECONDS
        while self.inflight and time.perf_counter() < limit:
            await asyncio.sleep(0.01)

    async def step(self, r: int, seconds: float, phase: str) -> dict[str, Any]:
        """Offer ``r`` asks/s for ``seconds``, then wait (at most
        ``DRAIN_SECONDS``) for every one to end."""
        server, users = self.server, self.users
        await self.quiet()
        await settle(server)
        start_seq, cpu0 = self.seq, server.begin(phase)
        t0 = time.perf_counter()
        while (now := time.perf_counter()) - t0 < seconds:
            target = start_seq + int((now - t0) * r)
            while self.seq < target:
                seq = self.seq
                sid = f"{self.prefix}{seq}"
                self.due[sid] = t0 + (seq - start_seq) / r
                self.queues[server.agent_port(seq % users)].put_nowait((sid, self.bodies[seq % users]))
                self.seq += 1
            await asyncio.sleep(0.001)
        sids = [f"{self.prefix}{i}" for i in range(start_seq, self.seq)]
        limit = time.perf_counter() + DRAIN_SECONDS
        while any(s not in self.done for s in sids) and time.perf_counter() < limit:
            await asyncio.sleep(0.01)
        cpu = server.end(cpu0)
        for w in self.workers:
            if w.done():
                w.result()  # an agent failed: raise its error
        lat = [(self.done[s] - self.due[s]) * 1000 for s in sids if s in self.done]
        out = {
            "rate": r,
            "asks": len(sids),
            "completed": len(lat),
            "p50_ms": pct(lat, 50),
            "p99_ms": pct(lat, 99),
            "cpu_per_ask_us": cpu / max(1, len(sids)) * 1e6,
        }
        out["passed"] = out["completed"] == out["asks"] and out["p99_ms"] <= self.p99_limit_ms
        return out

    async def warm_up(self, r: int, seconds: float) -> None:
        """First connections, caches: not counted."""
        await self.step(r, max(0.2, seconds / 3), "b4-warmup")


def passed_mean(steps: list[dict[str, Any]]) -> float:
    """CPU per ask averaged over the steps that passed (else the first step's)."""
    chosen = [s for s in steps if s["passed"]] or steps[:1]
    return sum(s["cpu_per_ask_us"] for s in chosen) / max(1, len(chosen))


async def rate(
    server: Server,
    rates: Sequence[int],
    step_seconds: float,
    users: int = 100,
    agents: int = 64,
    p99_limit_ms: float = P99_LIMIT_MS,
    case: Case = PLAIN,
) -> dict[str, Any]:
    """The ladder: the steps run, up to the first that failed, and the
    highest rate that passed (0: none did). A step passes when every ask
    completed with p99 under ``p99_limit_ms`` (the target's; a smoke run of
    the harness on a loaded machine lifts it)."""
    steps: list[dict[str, Any]] = []
    async with Load(server, users, agents, p99_limit_ms, case) as load:
        await load.warm_up(min(rates), step_seconds)
        for r in rates:
            steps.append(await load.step(r, step_seconds, f"b4-{r}"))
            if not steps[-1]["passed"]:
                break
    passed = [s for s in steps if s["passed"]]
    best = max(passed, key=lambda s: s["rate"]) if passed else None
    return {"max_rate": best["rate"] if best else 0, "cpu_per_ask_us": passed_mean(steps), "steps": steps}
