"""Slow and hostile peers: one that never reads, one that floods, and
thousands that vanish without a close. Each is dealt with by the limits in
``docs/decisions.md`` without costing other users (or their questions)
anything."""

from __future__ import annotations

import asyncio
import base64
import gc
import os
import socket

import pytest

from askd.server.ws.ws import WsHandler
from tests.conftest import RunningDaemon, eventually, q


async def raw_ws(
    daemon: RunningDaemon, user: str, rcvbuf: int | None = None, token: str | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket opened by hand that, from then on, does nothing at all:
    it never reads, never answers a ping, never closes."""
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: caps the TCP window
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", daemon.daemon.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{daemon.daemon.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {token or daemon.token('user', user)}\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


ABANDONED = 2000  # "thousands", bounded: each is two sockets in this process


def live_handlers() -> int:
    """WebSocket handler objects still alive (memory held per connection)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, WsHandler))


async def connection_count(daemon: RunningDaemon, user: str | None = None) -> int:
    params = {"userId": user} if user else None
    return len((await daemon.admin("GET", "/admin/v1/connections", params=params)).json()["connections"])


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_buffered_bytes": 65536}}])
async def test_a_peer_that_never_reads_is_dropped_and_nobody_else_notices(daemon: RunningDaemon) -> None:
    _, stalled = await raw_ws(daemon, "alice", rcvbuf=4096)
    good_tab = await daemon.connect("alice")
    other_user = await daemon.connect("bob")
    assert await connection_count(daemon, "alice") == 2

    big = "x" * 30_000
    asked = []
    for i in range(400):  # bounded: 12 MB at most
        asked.append((await daemon.ask(f"s{i % 20}", "alice", [q(f"Big {i}?", description=big)]))["requestId"])
        pushed = await good_tab.expect("ask_user_questions")
        assert pushed["payload"]["requestId"] == asked[-1]  # the reading tab keeps up
        if await connection_count(daemon, "alice") == 1:
            break
    else:
        raise AssertionError("the stalled peer was never dropped")

    # Bob never noticed: his questions still arrive at once.
    bob = await daemon.ask("bobs", "bob")
    assert (await other_user.expect("ask_user_questions"))["payload"]["requestId"] == bob["requestId"]
    # Dropping a peer never costs a question.
    pending = (await daemon.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
    assert sorted(p["requestId"] for p in pending) == sorted(asked)
    stalled.close()


@pytest.mark.parametrize("settings_overrides", [{"limits": {"frames_burst": 20, "frames_per_second": 5}}])
async def test_a_frame_flood_gets_rate_limited_then_closed(daemon: RunningDaemon) -> None:
    flooder = await daemon.connect("mallory")
    bystander = await daemon.connect("alice")
    for i in range(100):
        await flooder.send({"type": "ping", "id": i})
    frames = []
    while True:
        frame = await flooder.recv()
        frames.append(frame)
        if frame["type"] == "error":
            break
    assert frame["payload"]["code"] == "rate_limited"
    assert 20 <= len(frames) - 1 <= 25 and all(f["type"] == "pong" for f in frames[:-1])
    assert await flooder.closed() == 1008
    # One peer's flood costs the others nothing.
    await bystander.send({"type": "ping", "id": "still here"})
    assert await bystander.recv() == {"type": "pong", "id": "still here"}


@pytest.mark.parametrize(
    "settings_overrides",
    # Thousands from one address (this test): the per-address cap is off.
    [
        {
            "ws": {"ping_interval_seconds": 0.2, "ping_timeout_seconds": 0.2},
            "limits": {"max_connections_per_user": 256, "max_connections_per_address": 0},
        }
    ],
)
async def test_abandoned_connections_are_reaped_by_the_ping_timeout(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice")
    # One token per user, as tabs reuse theirs (each token is checked once,
    # then cached): what is timed here is the reaping, not HS256.
    minted = [daemon.token("user", f"user{i}") for i in range(10)]
    abandoned = [await raw_ws(daemon, f"user{i % 10}", token=minted[i % 10]) for i in range(ABANDONED)]
    # Opening them takes longer than a ping round on a loaded machine, so the
    # first may be reaped before the last is open: each one the daemon does
    # not hold now is one it already closed.
    # Handlers first, then the daemon's count: both only fall from here (all
    # are open), so handlers counted before can only be at least the
    # connections listed after; the other order races a reap in between.
    handlers = live_handlers()
    held = await connection_count(daemon)
    assert held > 0 and handlers >= held
    # Nobody answers a ping: after the timeout (and Tornado's 5 s grace for a
    # close handshake that never comes) every one is gone, and with it all
    # the daemon held for them: no registry entry, no peer, no handler object.
    await eventually(lambda: not daemon.daemon.hub.registry.connections(), timeout=20, every=0.1)
    assert await connection_count(daemon) == 0
    assert daemon.daemon.hub.connections.peers == {}
    assert daemon.daemon.hub.registry.stats()["users"] == 0
    await eventually(lambda: live_handlers() == 0, timeout=5, what="handler objects to be freed")
    # Each of them, reaped while the others were opening or after, was
    # closed by the ping timeout: pinged, then closed with its reason.
    for reader, _ in abandoned:
        assert await reaped_by_the_ping_timeout(reader)
    # The question is untouched, and a live tab still works.
    tab = await daemon.connect("alice")
    replay = await tab.subscribe("s1")
    assert replay[1]["payload"]["requestId"] == asked["requestId"]
    for _, writer in abandoned:
        writer.close()


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One unmasked server frame: (opcode, payload)."""
    head = await asyncio.wait_for(reader.readexactly(2), 5)
    size = head[1] & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2), "big")
    return head[0] & 0x0F, await reader.readexactly(size)


async def reaped_by_the_ping_timeout(reader: asyncio.StreamReader) -> bool:
    """Whether a peer that never answered read pings, then the close of a
    ping timeout (1000, Tornado's reason), then nothing more."""
    opcode, payload = await read_frame(reader)
    pings = 0
    while opcode == 0x9:
        pings += 1
        opcode, payload = await read_frame(reader)
    closed = opcode == 0x8 and int.from_bytes(payload[:2], "big") == 1000 and payload[2:] == b"ping timed out"
    return pings > 0 and closed and await asyncio.wait_for(reader.read(), 5) == b""


@pytest.mark.parametrize("settings_overrides", [{"ws": {"ping_interval_seconds": 0.3, "ping_timeout_seconds": 0.2}}])
async def test_the_shared_ping_timer_closes_a_silent_peer_and_keeps_a_live_one(daemon: RunningDaemon) -> None:
    live = await daemon.connect("alice", ping_interval=None)  # answers pings (websockets does), sends none
    reader, writer = await raw_ws(daemon, "bob")  # reads, but never answers a ping
    # A real WebSocket ping, then, with no pong within the timeout, a close
    # with Tornado's old reason for it.
    assert await read_frame(reader) == (0x9, b"")
    opcode, payload = await read_frame(reader)
    assert opcode == 0x8
    assert int.from_bytes(payload[:2], "big") == 1000 and payload[2:] == b"ping timed out"
    writer.close()
    await eventually(lambda: len(daemon.daemon.hub.registry.connections()) == 1, timeout=10, every=0.05)
    # Several intervals later the tab that answers is still there.
    await asyncio.sleep(1.0)
    await live.works()
    assert [c.user_id for c in daemon.daemon.hub.registry.connections()] == ["alice"]
    pinger = daemon.daemon.ctx.pinger
    assert len(pinger) == 1
    await live.close()
    await eventually(lambda: len(pinger) == 0 and not pinger._unanswered, timeout=5, every=0.05, what="the pinger to forget it")
