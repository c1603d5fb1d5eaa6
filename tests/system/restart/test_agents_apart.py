"""Agents kept apart across a restart: each session's agent and each
question's (its Idempotency-Key's) are kept by the store, so after a stop or
a ``kill -9`` another agent still gets 404 and every key replays only to its
own agent. SQLite (both ways down) and Redis (the node killed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunningDaemon, q
from tests.support.redis_server import RedisServer
from tests.system.restart import restart, running


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


async def call(d: RunningDaemon[Any], sub: str | None, method: str, path: str, **kw: Any) -> Any:
    headers = {"Authorization": f"Bearer {d.token('agent', sub)}", **kw.pop("headers", {})}
    return await d.http.request(method, f"{d.url}/v1/sessions/{path}", headers=headers, **kw)


async def ask(d: RunningDaemon[Any], sub: str | None, session: str, key: str | None = None, **body: Any) -> Any:
    json = {"userId": "alice", "questions": [q("Kept apart?")], **body}
    return await call(d, sub, "POST", f"{session}/questions", json=json, headers={"Idempotency-Key": key} if key else {})


async def kept_apart(d: RunningDaemon[Any], how: str) -> None:
    mine = (await ask(d, "agent-a", "s1", "k", parentSessionId="top")).json()["requestId"]
    local = (await ask(d, None, "s1", "k")).json()["requestId"]  # the same key, another agent
    assert local != mine
    assert (await ask(d, "agent-b", "s2")).status_code == 201

    await restart(d.daemon, how)

    for session in ("s1", "top"):
        assert (await ask(d, "agent-b", session, "k")).status_code == 404
        assert (await call(d, "agent-b", "GET", f"{session}/questions")).status_code == 404
        assert (await call(d, "agent-b", "POST", f"{session}/cancel")).status_code == 404
    assert (await call(d, "agent-b", "GET", f"s1/questions/{mine}")).status_code == 404
    assert (await call(d, "agent-a", "GET", "s2/questions")).status_code == 404
    # Each key replays to its own agent only.
    for sub, rid in (("agent-a", mine), (None, local)):
        r = await ask(d, sub, "s1", "k")
        assert (r.status_code, r.json().get("requestId"), r.headers.get("Idempotent-Replayed")) == (201, rid, "true"), r.text
    listed = (await call(d, "agent-a", "GET", "s1/questions")).json()["pending"]
    assert [p["requestId"] for p in listed] == [mine, local]
    assert (await call(d, "agent-a", "POST", "top/cancel")).json() == {"cancelled": 2}


@pytest.mark.parametrize("how", ["kill", "term"])
async def test_sqlite_keeps_agents_apart_across_a_restart(how: str, tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        await kept_apart(d, how)


async def test_redis_keeps_agents_apart_across_a_node_s_restart(tmp_path: Path, redis: RedisServer) -> None:
    async with running(tmp_path, ASKD_STORE=redis.url) as d:
        await kept_apart(d, "kill")
