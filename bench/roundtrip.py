"""B2, the round trip: an agent asks with ``?wait=``, the user's client gets
the question and answers, the agent's long-poll returns the answer.
Sequential rounds give p50/p99; then ``pairs`` agent/user pairs run rounds
concurrently for throughput. ``case`` (``bench/cases.py``): a plain question,
or an approval (each of its users' clients sends ``approve``)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.cases import PLAIN, Case
from bench.common import pct
from bench.proc import Server
from bench.wire import Closed, HttpClient, WsClient, http_connect, ws_connect

WARMUP_ROUNDS = 50
WAIT = 30  # the agent's ?wait=, far above any round


class Pair:
    """One agent (an HTTP keep-alive connection) and its users' tabs (one,
    or two for a quorum of two)."""

    def __init__(self, server: Server, http: HttpClient, tabs: list[WsClient], users: list[str], session: str, case: Case) -> None:
        self.http, self.tabs, self.case = http, tabs, case
        self.path = f"/v1/sessions/{session}/questions?wait={WAIT}"
        self.auth, self.body = server.agent_auth, case.body(users)

    def _refused(self, reply: asyncio.Future[tuple[int, bytes]]) -> None:
        """An ask refused: no push will come, so the tabs' waits end here."""
        if not reply.cancelled() and reply.exception() is None and reply.result()[0] >= 400:
            self.refused = reply.result()
            for tab in self.tabs:
                tab.abort()

    refused: tuple[int, bytes] | None = None

    async def round(self) -> float:
        t0 = time.perf_counter()
        reply = self.http.request("POST", self.path, self.auth, self.body)
        reply.add_done_callback(self._refused)
        try:
            for tab in self.tabs:  # each user replies once the ask reached it
                while True:  # skip the previous round's acks, voted and cancelled events
                    frame = await tab.recv()
                    if frame.startswith(b'{"type":"ask_user_questions",'):
                        break
                event = json.loads(frame)
                tab.send(self.case.reply(event["sessionId"], event["payload"]["requestId"], "a"))
        except Closed:
            if self.refused is not None:
                raise RuntimeError(f"ask got HTTP {self.refused[0]}: {self.refused[1][:300]!r}") from None
            raise
        status, body = await reply
        if status != 200 or b'"answered"' not in body:
            raise RuntimeError(f"round ended with HTTP {status}: {body[:300]!r}")
        return time.perf_counter() - t0

    def close(self) -> None:
        self.http.close()
        for tab in self.tabs:
            tab.abort()


async def make_pair(server: Server, k: int, case: Case = PLAIN) -> Pair:
    # A session belongs to whom it was first asked of: each case its own.
    name = "b2" if case is PLAIN else f"b2-{case.name}"
    users = [f"u-{name}-{k}"] + [f"u-{name}-{k}-{j}" for j in range(1, case.approvers)]
    http = await http_connect(server.agent_port(k))
    tabs = [await ws_connect(server.tab_port(k), server.user_token(u)) for u in users]
    return Pair(server, http, tabs, users, f"{name}-{k}", case)


async def roundtrip(server: Server, rounds: int, pairs: int, pair_rounds: int, case: Case = PLAIN) -> dict[str, Any]:
    solo = await make_pair(server, 0, case)
    for _ in range(WARMUP_ROUNDS):
        await solo.round()
    tag = "" if case is PLAIN else f"-{case.name}"  # the phases' names (profiles; B6 reads the plain ones)
    cpu0 = server.begin(f"b2{tag}-sequential")
    seq = [await solo.round() for _ in range(rounds)]
    seq_cpu = server.end(cpu0)

    many = await asyncio.gather(*(make_pair(server, k + 1, case) for k in range(pairs)))

    async def run(p: Pair) -> list[float]:
        return [await p.round() for _ in range(pair_rounds)]

    cpu0 = server.begin(f"b2{tag}-concurrent")
    t0 = time.perf_counter()
    lat = [x for xs in await asyncio.gather(*(run(p) for p in many)) for x in xs]
    wall = time.perf_counter() - t0
    conc_cpu = server.end(cpu0)
    for p in [solo, *many]:
        p.close()
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
