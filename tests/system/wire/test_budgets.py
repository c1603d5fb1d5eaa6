"""Budgets and flow control (spec M): a subscribe's replay is paced by the
socket's drain, subscriptions per connection are capped, and JSON nested
past 64 levels is invalid_request, in bodies and frames alike."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import websockets

from tests.conftest import RunningDaemon, q

PENDING = 200


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_buffered_bytes": 65536}}])
async def test_a_slow_steady_reader_gets_all_200_large_pending_questions(daemon: RunningDaemon) -> None:
    big = "x" * 20_000  # 200 of them: 4 MB, 60 times what a peer may leave unread
    asked = set()
    for i in range(PENDING):
        asked.add((await daemon.ask(f"s{i % 4}", "alice", [q(f"Big {i}?", description=big)]))["requestId"])
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)  # a narrow TCP window: the daemon must wait
    sock.connect(("127.0.0.1", daemon.daemon.port))
    sock.setblocking(False)
    async with websockets.connect(
        daemon.ws_url,
        sock=sock,
        max_queue=1,  # the client reads off the socket only as fast as this test takes frames
        additional_headers={"Authorization": f"Bearer {daemon.token('user', 'alice')}"},
    ) as conn:
        await conn.send(json.dumps({"type": "subscribe", "sessionId": "*", "id": "sub"}))
        got = set()
        while True:
            frame = json.loads(await asyncio.wait_for(conn.recv(), 10))
            if frame["type"] == "ack":
                break
            if frame["type"] == "ask_user_questions":
                got.add(frame["payload"]["requestId"])
            await asyncio.sleep(0.003)  # slow, but steady
        assert got == asked and frame["payload"]["repushed"] == PENDING
        # Still open and served.
        await conn.send(json.dumps({"type": "ping", "id": "alive"}))
        assert json.loads(await asyncio.wait_for(conn.recv(), 5)) == {"type": "pong", "id": "alive"}


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_subscriptions_per_connection": 3}}])
async def test_subscriptions_per_connection_are_capped(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    for sid in ("a", "b", "c", "a"):  # a repeat does not count
        await tab.subscribe(sid)
    await tab.send({"type": "subscribe", "sessionId": "d", "id": "over"})
    err = await tab.expect("error")
    assert err["payload"]["code"] == "too_many_subscriptions" and err["id"] == "over"
    # Not kept: asking again is refused again (a held session's repeat would not be).
    await tab.send({"type": "subscribe", "sessionId": "d", "id": "again"})
    assert (await tab.expect("error"))["payload"]["code"] == "too_many_subscriptions"
    await daemon.ask("d", "alice")
    await tab.expect("ask_user_questions")  # new questions reach every tab of the user regardless
    await tab.send({"type": "unsubscribe", "sessionId": "b", "id": "un"})
    await tab.expect("ack")
    assert [f["type"] for f in await tab.subscribe("d")] == ["session_snapshot", "ask_user_questions"]  # the freed slot


def nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize("depth", [65, 1000, 5000])
async def test_json_nested_past_64_levels_is_invalid_request(daemon: RunningDaemon, depth: int) -> None:
    body = '{"userId":"alice","questions":[{"question":"Deep?"}],"metadata":' + '{"k":' * depth + "1" + "}" * depth + "}"
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s/questions", content=body, headers={**daemon.agent_headers, "Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
    tab = await daemon.connect("alice")
    frame = '{"type":"subscribe","sessionId":"s","id":"deep","x":' + "[" * depth + "]" * depth + "}"
    await tab.send(frame)
    err = await tab.expect("error")
    assert err["payload"]["code"] == "invalid_request"
    await tab.works()


async def test_json_nested_64_levels_is_taken(daemon: RunningDaemon) -> None:
    # The question list and its object are two levels; metadata's own nesting fills the rest.
    asked = await daemon.ask("s", "alice", metadata=nested(63))
    assert asked["requestId"]
