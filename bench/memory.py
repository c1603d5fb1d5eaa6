"""B3, memory: the server's resident memory per pending question and per
idle authenticated connection, from VmRSS before and after. A warm-up of
each first, so that one-off costs (code paths, pools, caches) do not count."""

from __future__ import annotations

import asyncio
from typing import Any

from bench.common import CONNECT_CONCURRENCY, ask_all, bounded, settle, wait_connections
from bench.payload import PAYLOAD_BYTES
from bench.proc import Server
from bench.wire import WsClient, ws_connect

WARMUP = 500


async def _rss(server: Server) -> int:
    await settle(server)
    await asyncio.sleep(0.2)
    return server.rss()


async def memory(server: Server, questions: int, per_session: int, conns: int, tabs: int = 1, warmup: int = WARMUP) -> dict[str, Any]:
    await ask_all(server, [(f"warm-{i}", f"w{i}") for i in range(warmup)])
    warm_conns = await bounded([lambda i=i: ws_connect(server.port, server.user_token(f"w{i}")) for i in range(warmup)], CONNECT_CONCURRENCY)
    for c in warm_conns:
        c.abort()
    await wait_connections(server, 0)

    rss0 = await _rss(server)
    await ask_all(server, [(f"b3-{i // per_session}", f"u{i // per_session}") for i in range(questions)])
    rss1 = await _rss(server)

    users = max(1, conns // tabs)
    tokens = [server.user_token(f"c{i % users}") for i in range(conns)]
    held: list[WsClient] = await bounded([lambda t=t: ws_connect(server.port, t) for t in tokens], CONNECT_CONCURRENCY)
    await wait_connections(server, conns)
    rss2 = await _rss(server)
    for c in held:
        c.abort()
    per_q = (rss1 - rss0) / questions
    return {
        "questions": questions,
        "per_session": per_session,
        "conns": conns,
        "tabs": tabs,
        "per_question_b": per_q,
        "beyond_payload_b": per_q - PAYLOAD_BYTES,
        "per_conn_b": (rss2 - rss1) / conns,
        "rss_start_b": rss0,
    }
