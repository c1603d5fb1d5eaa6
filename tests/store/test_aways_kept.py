"""Away, with delegates (spec R), on every store: a set always takes, an end
only of an away held (its deadline's only at its ``until``); what took is
what a fresh load restores, with the away user a delegate answered for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from askd.core import AskInput, Limits
from askd.core.changes import AwayEnded, AwaySet
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store import Store
from askd.store.memory import MemoryStore
from askd.store.redis import RedisStore
from askd.store.sqlite import SqliteStore
from tests.support.redis_server import RedisServer
from tests.store.test_take_effect import Quiet

NOW = 1_800_000_000.0
QS = [{"question": "Deploy?"}]


async def _check(store: Store, reopen: Store | None) -> None:
    reg = Registry(Limits(), clock=lambda: NOW)
    store.attach(Quiet())
    restore(await store.load(), reg)

    async def step(changes: list) -> list[bool]:  # type: ignore[type-arg]
        taken = await store.commit(changes)
        assert all(any(t is c for c in changes) for t in taken)
        flags = [any(t is c for t in taken) for c in changes]
        assert flags == [reg.apply(c) for c in changes]  # the engine agrees, change by change
        return flags

    assert await step([
        AwayEnded("alice"),  # not away yet
        AwaySet("alice", NOW + 600.5, ("bob", "group:ops")),
        AwayEnded("alice", NOW + 30),  # a deadline for another until
        AwaySet("carol", NOW + 60, ("dave",)),
        AwayEnded("carol", NOW + 60),  # its own deadline
        AwayEnded("carol"),  # ended a step before
    ]) == [False, True, False, True, True, False]
    req, asked = reg.prepare_ask(AskInput("s1", "alice", QS))
    assert asked is not None and await step([asked]) == [True]
    answer = reg.prepare_answer("s1", req.request_id, {"Deploy?": "y"}, user_id="bob")
    assert answer.on_behalf_of == "alice" and await step([answer]) == [True]
    assert req.result()["onBehalfOf"] == "alice"
    if reopen is None:
        return
    fresh = Registry(Limits(), clock=lambda: NOW)
    reopen.attach(Quiet())
    restore(await reopen.load(), fresh)
    away = fresh.away("alice")
    assert away is not None and (away.until, away.delegates) == (NOW + 600.5, ("bob", "group:ops"))
    assert fresh.away("carol") is None
    kept = fresh.get("s1", req.request_id)
    assert kept is not None and kept.result()["onBehalfOf"] == "alice"


async def test_memory() -> None:
    await _check(MemoryStore(), None)


async def test_sqlite(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "askd.db")
    try:
        await _check(store, None)
    finally:
        await store.aclose()
    again = SqliteStore(tmp_path / "askd.db")
    try:
        fresh = Registry(Limits(), clock=lambda: NOW)
        again.attach(Quiet())
        restore(await again.load(), fresh)
        away = fresh.away("alice")
        assert away is not None and away.delegates == ("bob", "group:ops")
        [kept] = [r for s in list(fresh._book.sessions) for r in fresh._book.sessions[s].requests.values()]
        assert kept.on_behalf_of == "alice"
    finally:
        await again.aclose()


async def test_redis(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path / "redis").start()
    one, two = RedisStore(server.url, "node0"), RedisStore(server.url, "node1")
    try:
        await _check(one, two)
    finally:
        await one.aclose()
        await two.aclose()
        server.stop()
