"""Helpers every scenario shares: percentiles, bounded fan-out, asking in
bulk, and the admin calls (stats, abort) over the lean HTTP client."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.payload import ask_body, subscribe_frame
from bench.proc import Server
from bench.wire import Closed, WsClient, http_connect, ws_connect

T = TypeVar("T")

HTTP_POOL = 16  # agent connections used to ask in bulk
CONNECT_CONCURRENCY = 256  # connections opened at once outside a measured storm
SETTLE_TIMEOUT = 60.0


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (nearest rank) of ``values``."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


async def bounded(factories: Iterable[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Run coroutine factories with at most ``limit`` at once; results in order."""
    sem = asyncio.Semaphore(limit)

    async def one(make: Callable[[], Awaitable[T]]) -> T:
        async with sem:
            return await make()

    return await asyncio.gather(*(one(f) for f in factories))


@dataclass
class Asked:
    session_id: str
    user_id: str
    request_id: str


async def ask_all(server: Server, asks: Sequence[tuple[str, str]], pool: int = HTTP_POOL) -> list[Asked]:
    """POST one question per ``(session, user)``, over ``pool`` keep-alive
    connections; returns what was asked, in order."""
    out: list[Asked | None] = [None] * len(asks)
    clients = [await http_connect(server.port) for _ in range(min(pool, len(asks)) or 1)]

    async def worker(k: int) -> None:
        http = clients[k]
        for i in range(k, len(asks), len(clients)):
            sid, user = asks[i]
            status, body = await http.request("POST", f"/v1/sessions/{sid}/questions", server.agent_auth, ask_body(user))
            if status != 201:
                raise RuntimeError(f"ask {sid} got HTTP {status}: {body[:300]!r}")
            out[i] = Asked(sid, user, json.loads(body)["requestId"])

    await asyncio.gather(*(worker(k) for k in range(len(clients))))
    for http in clients:
        http.close()
    return out  # type: ignore[return-value]


async def admin(server: Server, method: str, path: str, body: Any = None) -> Any:
    http = await http_connect(server.admin_port)
    try:
        data = b"" if body is None else json.dumps(body).encode()
        status, reply = await http.request(method, path, server.admin_auth, data)
    finally:
        http.close()
    if status != 200:
        raise RuntimeError(f"{method} {path} got HTTP {status}: {reply[:300]!r}")
    return json.loads(reply)


async def wait_connections(server: Server, n: int, timeout: float = SETTLE_TIMEOUT) -> None:
    """Wait until the server counts exactly ``n`` open WebSocket connections."""
    deadline = time.monotonic() + timeout
    while True:
        seen = (await admin(server, "GET", "/admin/v1/stats"))["connections"]
        if seen == n:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.kind} holds {seen} connections, expected {n}")
        await asyncio.sleep(0.05)


async def settle(server: Server, quiet_cpu: float = 0.02, timeout: float = SETTLE_TIMEOUT) -> None:
    """Wait until the server has stopped burning CPU (its backlog is done)."""
    deadline = time.monotonic() + timeout
    last = server.cpu()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        now = server.cpu()
        if now - last <= quiet_cpu:
            return
        last = now


@dataclass
class Tab:
    """One user connection and what it expects to hold."""

    user_id: str
    session_id: str
    request_ids: set[str] = field(default_factory=set)
    client: WsClient | None = None


async def open_tab(server: Server, tab: Tab, retries: int = 20) -> WsClient:
    """Connect, subscribe to the tab's session and read frames up to the
    subscribe ack; check every expected question was (re-)pushed."""
    for attempt in range(retries):
        try:
            client = await ws_connect(server.port, server.user_token(tab.user_id))
            break
        except (OSError, Closed):
            if attempt == retries - 1:
                raise
            await asyncio.sleep(0.05 * (attempt + 1))
    client.send(subscribe_frame(tab.session_id))
    got: set[str] = set()
    while True:
        frame = await client.recv()
        if frame.startswith(b'{"type":"ask_user_questions",'):
            got.add(json.loads(frame)["payload"]["requestId"])
        elif frame.startswith(b'{"type":"ack"'):
            break
    if got != tab.request_ids:
        raise RuntimeError(f"{server.kind}: tab of {tab.user_id} got {len(got)} questions, expected {len(tab.request_ids)}")
    tab.client = client
    return client
