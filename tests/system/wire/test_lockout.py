"""Idle sockets cannot lock anyone out (issue 29, item 3). The issue's
attack: 150 idle unauthenticated sockets (the cap scaled down to 150) filled
the one pool both listeners shared, and agents, tabs, ``/healthz`` and the
admin API were all refused. Now each listener has its own pool,
unauthenticated connections may hold only half of it and make room for a
new connection (the oldest is closed), and each must send its request's
headers within ``limits.header_timeout_seconds``."""

from __future__ import annotations

import asyncio
import io
import time

import httpx
import pytest

from tests.conftest import RunningDaemon, q
from tests.system.wire.test_front_door import closed_within, open_raw

IDLE = 150
HEADER_TIMEOUT = 1.5  # seconds: short, for the test


async def served(port: int, token: str | None = None) -> bytes:
    """A request on a fresh raw connection (never one of httpx's pooled
    ones, which predate the flood), its status line."""
    reader, writer = await open_raw(port)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode())
    try:
        return await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
    finally:
        writer.close()


@pytest.mark.parametrize(
    "settings_overrides", [{"limits": {"max_connections": IDLE, "header_timeout_seconds": HEADER_TIMEOUT}}]
)
async def test_idle_sockets_lock_out_nobody(daemon: RunningDaemon, log_text: io.StringIO) -> None:
    port, admin_port = daemon.daemon.port, daemon.daemon.admin_port
    idle = [await open_raw(port) for _ in range(IDLE)]
    idle += [await open_raw(admin_port) for _ in range(20)]  # some at the admin listener too
    started = time.monotonic()
    # Everyone gets in while every idle socket is still within its header timeout.
    async with httpx.AsyncClient(timeout=5) as fresh:
        r = await fresh.get(f"{daemon.admin_url}/admin/v1/stats", headers=daemon.admin_headers)
        assert r.status_code == 200, r.text
        assert (await fresh.get(f"{daemon.url}/healthz")).status_code == 200
        r = await fresh.get(f"{daemon.admin_url}/healthz")
        assert r.status_code == 200
    assert (await served(port)).startswith(b"HTTP/1.1 200")
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Still reachable?")])
    assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == asked["requestId"]
    await tab.works()
    assert time.monotonic() - started < HEADER_TIMEOUT, "too slow to show anything: every idle socket timed out meanwhile"
    # Every idle socket ends: made room for a newcomer, or timed out.
    took = await asyncio.gather(*(closed_within(reader, 10) for reader, _ in idle))
    assert max(took) < HEADER_TIMEOUT + 2, max(took)
    for _, writer in idle:
        writer.close()
    assert '"event":"http.unproven_evicted"' in log_text.getvalue()
    # The tab, proven by its token, outlived them all.
    await tab.works()


@pytest.mark.parametrize("settings_overrides", [{"limits": {"header_timeout_seconds": 0.5}}])
async def test_a_connection_that_sends_no_request_ends_at_the_header_timeout(daemon: RunningDaemon) -> None:
    for first in (b"", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"):  # nothing; headers never finished
        reader, writer = await open_raw(daemon.daemon.port)
        writer.write(first)
        took = await closed_within(reader, 10)
        writer.close()
        assert 0.4 < took < 2.5, took


@pytest.mark.parametrize("settings_overrides", [{"limits": {"header_timeout_seconds": 0.5}}])
async def test_a_proven_connection_may_idle_longer(daemon: RunningDaemon) -> None:
    """Once a request carried a valid token, the connection waits for the
    next as long as limits.idle_timeout_seconds (an agent's keep-alive pool)."""
    reader, writer = await open_raw(daemon.daemon.port)
    request = (
        f"GET /v1/sessions/s1/questions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token('agent')}\r\n\r\n"
    ).encode()
    for _ in range(2):
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200"), head
        length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(b":")[1])
        await reader.readexactly(length)
        await asyncio.sleep(1.0)  # twice the header timeout
    writer.close()


@pytest.mark.parametrize(
    "settings_overrides",
    [{"limits": {"max_connections_per_address": 2}, "trusted_proxies": ["127.0.0.1"]}],
)
async def test_a_trusted_proxy_is_not_held_to_the_per_address_cap(daemon: RunningDaemon) -> None:
    held = [await open_raw(daemon.daemon.port) for _ in range(3)]
    assert (await served(daemon.daemon.port)).startswith(b"HTTP/1.1 200")
    for _, writer in held:
        writer.close()


def test_the_per_address_cap_is_on_by_default() -> None:
    from askd.config import load_settings

    limits = load_settings().limits
    assert limits.max_connections_per_address == 1000 and limits.header_timeout_seconds == 10
