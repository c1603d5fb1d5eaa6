"""B1, the reconnect storm: every user holds pending questions and one or
more open tabs; the admin API aborts every connection (a proxy blip); all
tabs reconnect at once, with no jitter, and re-subscribe. Measured: the
time until every user holds its questions again, per-user p50/p99, and the
server's CPU seconds over the storm."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.common import CONNECT_CONCURRENCY, Tab, admin, ask_all, bounded, open_tab, pct, settle, wait_connections
from bench.proc import Server


async def storm(server: Server, users: int, tabs: int = 1, questions: int = 1) -> dict[str, Any]:
    asks = [(f"b1-{u}", f"u{u}") for u in range(users) for _ in range(questions)]
    asked = await ask_all(server, asks)
    rids: dict[str, set[str]] = {}
    for a in asked:
        rids.setdefault(a.session_id, set()).add(a.request_id)
    all_tabs = [Tab(f"u{u}", f"b1-{u}", rids[f"b1-{u}"]) for u in range(users) for _ in range(tabs)]

    await bounded([lambda t=t: open_tab(server, t) for t in all_tabs], CONNECT_CONCURRENCY)
    await wait_connections(server, len(all_tabs))
    dropped = (await admin(server, "POST", "/admin/v1/disconnect", {"all": True, "mode": "abort"}))["disconnected"]
    if dropped != len(all_tabs):
        raise RuntimeError(f"{server.kind} aborted {dropped} of {len(all_tabs)} connections")
    await asyncio.gather(*(t.client.closed for t in all_tabs if t.client))
    await wait_connections(server, 0)
    await settle(server)

    cpu0, load0 = server.begin(f"b1-{users}x{tabs}x{questions}"), time.process_time()
    t0 = time.perf_counter()

    async def back(tab: Tab) -> float:
        await open_tab(server, tab)
        return time.perf_counter() - t0

    done = await asyncio.gather(*(back(t) for t in all_tabs))  # all at once: the worst case
    wall = time.perf_counter() - t0
    cpu, load_cpu = server.end(cpu0), time.process_time() - load0
    per_user = [max(done[u * tabs : (u + 1) * tabs]) for u in range(users)]
    for t in all_tabs:
        if t.client:
            t.client.abort()
    return {
        "users": users,
        "tabs": tabs,
        "questions": questions,
        "wall_s": wall,
        "cpu_s": cpu,
        "p50_s": pct(per_user, 50),
        "p99_s": pct(per_user, 99),
        "load_cpu_s": load_cpu,
    }
