"""The history index each store keeps with its audit trail (``GET
/v1/me/history``, protocol section 19): the same ends on every store,
newest first, an escalation's group members included; on SQLite, a file
whose records predate the index gets it filled when it is migrated. With
each end, its question's title (``header``), kept by the index alone:
capped and pruned with the ends, there after a restart."""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from askd.core import AskInput, Limits
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store.memory import MemoryStore
from askd.store.redis import RedisStore
from askd.store.redis import audit as redis_audit
from askd.store.sqlite import SqliteStore
from askd.store.sqlite.schema import MIGRATIONS
from tests.support.redis_server import RedisServer
from tests.store.test_take_effect import Quiet


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def stored(store: Any, reg: Registry, changes: list[Any]) -> None:
    for change in await store.commit(changes):
        assert reg.apply(change)


async def life(store: Any, clock: Clock) -> dict[str, list[tuple[str, str]]]:
    """Questions asked, escalated to a group, answered and cancelled; each
    user's history as (requestId, event)."""
    ids = itertools.count(1)
    reg = Registry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"r{next(ids)}")
    await stored(store, reg, [reg.prepare_group_set("leads", ["alice", "dave"])])
    qs = [{"question": "Deploy?"}]
    a, asked = reg.prepare_ask(AskInput("s1", "alice", qs, escalate=((60.0, ("group:leads", "erin")),)))
    b, asked_b = reg.prepare_ask(AskInput("s2", "bob", qs))
    await stored(store, reg, [asked, asked_b])
    clock.now += 60
    await stored(store, reg, reg.due())  # the step: dave and erin join (alice is asked already)
    await stored(store, reg, [reg.prepare_answer("s1", a.request_id, {"Deploy?": "yes"}, user_id="dave", via="ws")])
    await stored(store, reg, reg.prepare_cancel("s2"))
    c, asked_c = reg.prepare_ask(AskInput("s3", "alice", qs))
    await stored(store, reg, [asked_c])  # pending: in no history
    return {u: [(e.record["requestId"], e.record["event"]) for e in await store.audit.history(u)] for u in ("alice", "bob", "dave", "erin", "carol")}


EXPECTED = {
    "alice": [("r1", "answered")],
    "bob": [("r2", "cancelled")],
    "dave": [("r1", "answered")],
    "erin": [("r1", "answered")],
    "carol": [],
}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_each_store_indexes_the_ends_of_its_audiences(tmp_path: Path, kind: str) -> None:
    clock = Clock()
    store = MemoryStore(clock) if kind == "memory" else SqliteStore(tmp_path / "askd.db", clock)
    assert await life(store, clock) == EXPECTED


async def test_a_file_migrated_to_the_index_gets_it_filled_from_its_records(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "askd.db"
    store = SqliteStore(path, clock)
    assert await life(store, clock) == EXPECTED
    store.close()
    # The file as it was before the index's migration, then that migration
    # and the titles' (which finds no title to fill: the records hold none).
    steps = [m for m in MIGRATIONS if any("audit_history" in s or "audit_titles" in s for s in m)]
    db = sqlite3.connect(path)
    db.execute("DROP TABLE audit_history")
    db.execute("DROP TABLE audit_titles")
    db.execute("CREATE INDEX audit_by_at ON audit (at)")  # as step 11 made it (step 17 drops it)
    for statement in (s for step in steps for s in step):
        db.execute(statement)
    db.commit()
    db.close()
    again = SqliteStore(path, clock)
    assert {u: [(e.record["requestId"], e.record["event"]) for e in await again.audit.history(u)] for u in EXPECTED} == EXPECTED
    assert {e.title for u in EXPECTED for e in await again.audit.history(u)} == {None}
    # The question still pending (s3) has its audience in its row, read from its records.
    assert again._db.execute("SELECT request_id, title, users FROM audit_titles").fetchall() == [("r3", "", '["alice"]')]
    again.close()


LONG = "Rotate " + "the keys " * 40 + "now?"


async def titled_life(store: Any, clock: Clock) -> None:
    """Questions with and without a header, Markdown, a long text: answered,
    declined, timed out, withdrawn, cancelled (all alice's); one pending."""
    ids = itertools.count(1)
    reg = Registry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"t{next(ids)}")
    asks = [
        ("s1", [{"question": "Deploy?", "header": "Deploy api"}, {"question": "Notes?"}]),
        ("s2", [{"question": "Drop the **staging** `db`?"}]),
        ("s3", [{"question": LONG}]),
        ("s4", [{"question": "Withdraw *me*?", "header": "Take back"}]),
        ("s5", [{"question": "Cancel [me](https://x.example)?"}]),
    ]
    for sid, qs in asks:
        timeout = 30.0 if sid == "s3" else None
        _, asked = reg.prepare_ask(AskInput(sid, "alice", qs, timeout=timeout))
        await stored(store, reg, [asked])
    await stored(store, reg, [reg.prepare_answer("s1", "t1", {"Deploy?": "yes", "Notes?": "-"}, user_id="alice", via="ws")])
    await stored(store, reg, [reg.prepare_decline("s2", "t2", "no", user_id="alice", via="ws")])
    clock.now += 31
    await stored(store, reg, reg.due())
    _, withdrawn = reg.prepare_withdraw("s4", "t4")
    await stored(store, reg, [withdrawn])
    await stored(store, reg, reg.prepare_cancel("s5"))
    _, pending = reg.prepare_ask(AskInput("s6", "alice", [{"question": "Pending?"}]))
    await stored(store, reg, [pending])


TITLED = [
    ("t5", "cancelled", "Cancel me?"),
    ("t4", "withdrawn", "Take back"),
    ("t3", "timeout", LONG[:199].rstrip() + "…"),
    ("t2", "declined", "Drop the staging db?"),
    ("t1", "answered", "Deploy api"),
]


async def titled(store: Any, user: str = "alice") -> list[tuple[str, str, str | None]]:
    return [(e.record["requestId"], e.record["event"], e.title) for e in await store.audit.history(user)]


@asynccontextmanager
async def reopened(kind: str, tmp_path: Path, clock: Clock) -> AsyncIterator[Callable[[], Any]]:
    """A way to open the store ``kind`` again and again on the same data."""
    server = None
    if kind == "redis":
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        server = RedisServer(tmp_path / "redis").start()
    memory = MemoryStore(clock)

    def open_() -> Any:
        if kind == "memory":
            return memory
        if kind == "sqlite":
            return SqliteStore(tmp_path / "askd.db", clock)
        assert server is not None
        return RedisStore(server.url, "node0", clock=clock)

    try:
        yield open_
    finally:
        if server is not None:
            server.stop()


async def opened(open_: Callable[[], Any]) -> Any:
    store = open_()
    store.attach(Quiet())
    restore(await store.load(), Registry())
    return store


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_keeps_each_questions_title_with_its_end(tmp_path: Path, kind: str) -> None:
    clock = Clock()
    async with reopened(kind, tmp_path, clock) as open_:
        store = await opened(open_)
        await titled_life(store, clock)
        assert await titled(store) == TITLED
        assert await titled(store, "bob") == []
        # The records hold no title: the trail is as the spec lists it.
        records = await store.audit.page(0, 100)
        assert not any(t in json.dumps(records) for t in ("Deploy api", "staging", "Take back", "Pending"))
        if kind == "memory":
            return
        await store.aclose()
        again = await opened(open_)  # a restart: the titles are in the file, or in Redis
        assert await titled(again) == TITLED
        assert [r["hash"] for r in await again.audit.page(0, 100)] == [r["hash"] for r in records]
        await again.aclose()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_title_goes_with_its_end_capped_and_pruned(tmp_path: Path, kind: str) -> None:
    clock = Clock()
    async with reopened(kind, tmp_path, clock) as open_:
        store = await opened(open_)
        ids = itertools.count(1)
        reg = Registry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"q{next(ids)}")
        for n in range(1, 106):  # 105 ends: the lists keep the last 100
            who = ["alice", "bob"] if n % 2 else ["alice"]
            _, asked = reg.prepare_ask(AskInput(f"s{n}", who[0], [{"question": f"Number {n}?"}], to=tuple(who)))
            await stored(store, reg, [asked])
            await stored(store, reg, reg.prepare_cancel(f"s{n}"))
            clock.now += 1
        mine = await titled(store)
        assert [t for _, _, t in mine] == [f"Number {n}?" for n in range(105, 5, -1)]
        assert [t for _, _, t in await titled(store, "bob")][-1] == "Number 1?"  # bob's list holds 53
        if kind == "sqlite":
            assert store._db.execute("SELECT count(*) FROM audit_titles").fetchone()[0] == 0  # none pending
        if kind == "redis":
            # a title is kept once, while a list holds it: alice's 100 and bob's first (odd, below 6)
            redis = store._redis
            assert await redis.hlen(redis_audit.TITLES) == 103 == await redis.hlen(redis_audit.HELD)
            assert not [k async for k in redis.scan_iter(match=redis_audit.P + "audit:title:*")]
        # Retention: an end's record goes, and its title with it.
        records = await store.audit.page(0, 1000)
        last_of_100 = next(r for r in records if r["requestId"] == "q100" and r["event"] == "cancelled")
        assert await store.audit.prune(records[records.index(last_of_100) + 1]["at"]) > 0
        assert [t for _, _, t in await titled(store)] == [f"Number {n}?" for n in range(105, 100, -1)]
        if kind == "sqlite":
            assert store._db.execute("SELECT count(*) FROM audit_history WHERE title IS NOT NULL").fetchone()[0] == 5 + 3
        if kind == "redis":
            assert sorted(int(s) for s in await store._redis.hkeys(redis_audit.TITLES)) == sorted(
                r["seq"] for r in records if r["event"] == "cancelled" and int(r["requestId"][1:]) > 100
            )
        await store.aclose()


async def test_an_end_with_no_row_for_its_question_reads_its_audience_from_its_records(tmp_path: Path) -> None:
    # Its records' retention ran, or it predates schema 17 and its row was not filled: a scan.
    clock = Clock()
    store = SqliteStore(tmp_path / "askd.db", clock)
    try:
        reg = Registry(Limits(question_timeout=900), clock=clock)
        await stored(store, reg, [reg.prepare_group_set("leads", ["dave"])])
        req, asked = reg.prepare_ask(AskInput("s1", "alice", [{"question": "Deploy?"}], escalate=((60.0, ("group:leads",)),)))
        await stored(store, reg, [asked])
        store._db.execute("DELETE FROM audit_titles")
        clock.now += 60
        await stored(store, reg, reg.due())  # the step, with no row to grow: made from the records
        store._db.execute("DELETE FROM audit_titles")
        await stored(store, reg, [reg.prepare_answer("s1", req.request_id, {"Deploy?": "yes"}, user_id="dave", via="ws")])
        for user in ("alice", "dave"):
            assert [(p.record["requestId"], p.record["event"], p.title) for p in await store.audit.history(user)] == [
                (req.request_id, "answered", None)
            ]
    finally:
        store.close()
