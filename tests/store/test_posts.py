"""Each store's posts (``store.posts``: the chat messages posted about a
question, to edit when it ends) and users' Slack ids: kept, read by
question and all at once, replaced by key, forgotten when done or past
their instant, the same on every store; on SQLite across a reopen."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from askd.store import Store
from askd.store.parts import SLACK, Post
from askd.store.sqlite import SqliteStore
from tests.store.test_take_effect import loaded


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(kind: str, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(kind, tmp_path) as opened:
        yield opened


def post(rid: str, key: str, ts: str = "1.000001", until: float | None = None) -> Post:
    return Post("s1", rid, key, "C1", ts, '{"text":"x","blocks":[]}', until if until is not None else time.time() + 60)


async def test_posts_are_kept_by_question_until_done(store: Store) -> None:
    await store.posts.keep(post("r1", "a0:#"))
    await store.posts.keep(post("r1", "a0:@alice", "1.000002"))
    await store.posts.keep(post("r2", "a0:#", "1.000003"))
    assert [p.key for p in await store.posts.of("r1")] == ["a0:#", "a0:@alice"]
    assert await store.posts.of("nope") == []
    await store.posts.keep(post("r1", "a0:#", "1.000009"))  # the same message: replaced
    assert [p.ts for p in await store.posts.of("r1")] == ["1.000009", "1.000002"]
    assert sorted((p.request_id, p.key) for p in await store.posts.every()) == [("r1", "a0:#"), ("r1", "a0:@alice"), ("r2", "a0:#")]
    await store.posts.done("r1", "a0:#")
    await store.posts.done("r1", "a0:#")  # twice: no harm
    [left] = await store.posts.of("r1")
    assert left == post("r1", "a0:@alice", "1.000002", left.until)
    assert left.body == '{"text":"x","blocks":[]}' and left.channel == "C1" and left.session_id == "s1"


async def test_a_post_past_its_instant_is_gone(kind: str, tmp_path: Path) -> None:
    clock = Clock(time.time())
    async with loaded(kind, tmp_path, clock) as store:
        await store.posts.keep(post("r1", "a0:#", until=clock.now + 5))
        await store.posts.keep(post("r2", "a0:#", until=clock.now + 50))
        clock.now += 10
        assert await store.posts.of("r1") == []
        assert [p.request_id for p in await store.posts.every()] == ["r2"]


async def test_sqlite_keeps_posts_across_a_reopen(tmp_path: Path) -> None:
    db = SqliteStore(tmp_path / "askd.db")
    await db.posts.keep(post("r1", "a0:#"))
    await db.directory.set(SLACK, "alice", "U0ALICE")
    db.close()
    db = SqliteStore(tmp_path / "askd.db")
    try:
        assert [p.key for p in await db.posts.of("r1")] == ["a0:#"]
        assert await db.directory.get(SLACK, ["alice", "bob"]) == {"alice": "U0ALICE"}
    finally:
        db.close()


async def test_slack_ids_are_a_user_setting(store: Store) -> None:
    await store.directory.set(SLACK, "alice", "U0ALICE")
    await store.directory.set(SLACK, "bob", "U0BOB")
    await store.directory.set(SLACK, "bob", None)
    assert await store.directory.get(SLACK, ["alice", "bob"]) == {"alice": "U0ALICE"}
