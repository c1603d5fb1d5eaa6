"""B4, asks per second: an open-loop stream of asks at rising rates, each
answered by its connected user as soon as it arrives. The latency of one
ask runs from the moment it was due to the user's ``ack`` of its answer
(push, answer and reply all inside). A step passes while p99 stays under
the limit and every ask of the step completes; the figure is the highest
rate that passed."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from bench.common import CONNECT_CONCURRENCY, bounded, pct, settle
from bench.payload import answer_frame, ask_body
from bench.proc import Server
from bench.wire import HttpClient, WsClient, http_connect, ws_connect

P99_LIMIT_MS = 100.0
DRAIN_SECONDS = 5.0


async def rate(
    server: Server,
    rates: Sequence[int],
    step_seconds: float,
    users: int = 100,
    agents: int = 64,
    p99_limit_ms: float = P99_LIMIT_MS,
) -> dict[str, Any]:
    """The steps run, and the highest rate that passed (0: none did). A step
    passes when every ask completed with p99 under ``p99_limit_ms`` (the
    target's; a smoke run of the harness on a loaded machine lifts it)."""
    due: dict[str, float] = {}  # session id -> when its ask was due
    done: dict[str, float] = {}

    def on_frame(tab: WsClient, frame: bytes) -> None:
        if frame.startswith(b'{"type":"ask_user_questions",'):
            ev = json.loads(frame)
            sid = ev["sessionId"]
            tab.send(answer_frame(sid, ev["payload"]["requestId"], sid))
        elif frame.startswith(b'{"type":"ack"') and b'"accepted":true' in frame:
            done[json.loads(frame)["id"]] = time.perf_counter()

    tabs = await bounded(
        [lambda k=k: ws_connect(server.tab_port(k), server.user_token(f"u-b4-{k}"), on_frame) for k in range(users)],
        CONNECT_CONCURRENCY,
    )
    bodies = [ask_body(f"u-b4-{k}") for k in range(users)]

    # The agents are spread evenly over the ports asks go to (one server: all
    # on one), one queue per port: user k's asks go to agent_port(k).
    ports = list(dict.fromkeys(server.agent_port(k) for k in range(users)))
    queues: dict[int, asyncio.Queue[tuple[str, bytes]]] = {port: asyncio.Queue() for port in ports}
    agents_http = [(port, await http_connect(port)) for port in ports for _ in range(max(1, agents // len(ports)))]

    async def agent(queue: asyncio.Queue[tuple[str, bytes]], http: HttpClient) -> None:
        while True:
            sid, body = await queue.get()
            status, reply = await http.request("POST", f"/v1/sessions/{sid}/questions", server.agent_auth, body)
            # 200: answered before the reply left. On a shared store the push
            # goes out as the node applies the stream, before the ask's reply.
            if status not in (200, 201):
                raise RuntimeError(f"ask got HTTP {status}: {reply[:300]!r}")

    workers = [asyncio.create_task(agent(queues[port], h)) for port, h in agents_http]
    seq = 0

    async def step(r: int, seconds: float, phase: str) -> dict[str, Any]:
        nonlocal seq
        await settle(server)
        start_seq, cpu0 = seq, server.begin(phase)
        t0 = time.perf_counter()
        while (now := time.perf_counter()) - t0 < seconds:
            target = start_seq + int((now - t0) * r)
            while seq < target:
                sid = f"b4-{seq}"
                due[sid] = t0 + (seq - start_seq) / r
                queues[server.agent_port(seq % users)].put_nowait((sid, bodies[seq % users]))
                seq += 1
            await asyncio.sleep(0.001)
        sids = [f"b4-{i}" for i in range(start_seq, seq)]
        limit = time.perf_counter() + DRAIN_SECONDS
        while any(s not in done for s in sids) and time.perf_counter() < limit:
            await asyncio.sleep(0.01)
        cpu = server.end(cpu0)
        for w in workers:
            if w.done():
                w.result()  # an agent failed: raise its error
        lat = [(done[s] - due[s]) * 1000 for s in sids if s in done]
        out = {
            "rate": r,
            "asks": len(sids),
            "completed": len(lat),
            "p50_ms": pct(lat, 50),
            "p99_ms": pct(lat, 99),
            "cpu_per_ask_us": cpu / max(1, len(sids)) * 1e6,
        }
        out["passed"] = out["completed"] == out["asks"] and out["p99_ms"] <= p99_limit_ms
        return out

    steps: list[dict[str, Any]] = []
    try:
        await step(min(rates), max(0.2, step_seconds / 3), "b4-warmup")  # first connections, caches: not counted
        for r in rates:
            steps.append(await step(r, step_seconds, f"b4-{r}"))
            if not steps[-1]["passed"]:
                break
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        for _, h in agents_http:
            h.close()
        for t in tabs:
            t.abort()
        await asyncio.sleep(0)  # the sockets close on the loop's next turn, not at a server's stop (its 2 s grace)
    passed = [s for s in steps if s["passed"]]
    best = max(passed, key=lambda s: s["rate"]) if passed else None
    cpu_steps = passed or steps[:1]
    return {
        "max_rate": best["rate"] if best else 0,
        "cpu_per_ask_us": sum(s["cpu_per_ask_us"] for s in cpu_steps) / len(cpu_steps),
        "steps": steps,
    }
