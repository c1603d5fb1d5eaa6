"""B2, the round trip: an agent asks with ``?wait=``, the user's client gets
the question and answers, the agent's long-poll returns the answer.
Sequential rounds give p50/p99; then ``pairs`` agent/user pairs run rounds
concurrently for throughput."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.common import pct
from bench.payload import answer_frame, ask_body
from bench.proc import Server
from bench.wire import HttpClient, WsClient, http_connect, ws_connect

WARMUP_ROUNDS = 50
WAIT = 30  # the agent's ?wait=, far above any round


class Pair:
    """One agent (an HTTP keep-alive connection) and one user (a tab)."""

    def __init__(self, server: Server, http: HttpClient, tab: WsClient, user: str, session: str) -> None:
        self.http, self.tab = http, tab
        self.path = f"/v1/sessions/{session}/questions?wait={WAIT}"
        self.auth, self.body = server.agent_auth, ask_body(user)

    async def round(self) -> float:
        t0 = time.perf_counter()
        reply = self.http.request("POST", self.path, self.auth, self.body)
        while True:  # skip the previous round's ack and cancelled
            frame = await self.tab.recv()
            if frame.startswith(b'{"type":"ask_user_questions",'):
                break
        event = json.loads(frame)
        self.tab.send(answer_frame(event["sessionId"], event["payload"]["requestId"], "a"))
        status, body = await reply
        if status != 200 or b'"answered"' not in body:
            raise RuntimeError(f"round ended with HTTP {status}: {body[:300]!r}")
        return time.perf_counter() - t0


async def make_pair(server: Server, k: int) -> Pair:
    user = f"u-b2-{k}"
    http = await http_connect(server.agent_port(k))
    return Pair(server, http, await ws_connect(server.tab_port(k), server.user_token(user)), user, f"b2-{k}")


async def roundtrip(server: Server, rounds: int, pairs: int, pair_rounds: int) -> dict[str, Any]:
    solo = await make_pair(server, 0)
    for _ in range(WARMUP_ROUNDS):
        await solo.round()
    cpu0 = server.begin("b2-sequential")
    seq = [await solo.round() for _ in range(rounds)]
    seq_cpu = server.end(cpu0)

    many = await asyncio.gather(*(make_pair(server, k + 1) for k in range(pairs)))

    async def run(p: Pair) -> list[float]:
        return [await p.round() for _ in range(pair_rounds)]

    cpu0 = server.begin("b2-concurrent")
    t0 = time.perf_counter()
    lat = [x for xs in await asyncio.gather(*(run(p) for p in many)) for x in xs]
    wall = time.perf_counter() - t0
    conc_cpu = server.end(cpu0)
    for p in [solo, *many]:
        p.http.close()
        p.tab.abort()
    await asyncio.sleep(0)  # the sockets close on the loop's next turn, not at a server's stop (its 2 s grace)
    return {
        "rounds": rounds,
        "p50_ms": pct(seq, 50) * 1000,
        "p99_ms": pct(seq, 99) * 1000,
        "cpu_per_round_us": seq_cpu / rounds * 1e6,
        "pairs": pairs,
        "throughput_rps": len(lat) / wall,
        "conc_p50_ms": pct(lat, 50) * 1000,
        "conc_p99_ms": pct(lat, 99) * 1000,
        "conc_cpu_per_round_us": conc_cpu / len(lat) * 1e6,
    }
