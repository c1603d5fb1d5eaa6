"""``store.claims.claim`` of an ``open:`` key on each store: the first claim of a key wins, even among
racing claims; a claim is dropped once it expires (SQLite deletes its
row from ``claims``); a store that fails while askd runs makes ``POST /v1/open`` answer 503
with no token, and the code, never recorded, works once it is back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from askd.store import Store
from askd.store.sqlite import SqliteStore
from tests.conftest import RunningDaemon
from tests.support.open_codes import exchange, new_code, refused_as_used, user_of
from tests.store.test_store_failures import read_only
from tests.store.test_take_effect import loaded

LATER = time.time() + 3600


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def each(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(request.param, tmp_path) as opened:
        yield opened


async def test_the_first_claim_of_a_key_wins(each: Store) -> None:
    assert await each.once_keys.take("open:a", LATER)
    assert not await each.once_keys.take("open:a", LATER)
    assert await each.once_keys.take("open:b", LATER)


async def test_of_racing_claims_one_wins(each: Store) -> None:
    won = await asyncio.gather(*(each.once_keys.take("open:raced", LATER) for _ in range(20)))
    assert sorted(won) == [False] * 19 + [True]


async def test_an_expired_claim_is_dropped(each: Store) -> None:
    soon = time.time() + 0.5  # room for three calls on a loaded machine
    assert await each.once_keys.take("open:a", soon)
    assert await each.once_keys.take("open:b", soon)
    assert not await each.once_keys.take("open:a", LATER)  # still kept
    await asyncio.sleep(max(0.0, soon - time.time()) + 0.05)
    assert await each.once_keys.take("open:a", LATER)  # free again
    if isinstance(each, SqliteStore):
        assert each._db.execute("SELECT key FROM claims").fetchall() == [("open:a",)]


async def test_a_failing_store_gives_503_and_no_token(daemon: RunningDaemon) -> None:
    code = new_code()
    with read_only(daemon):
        r = await exchange(daemon.http, daemon.url, code)
        assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable", r.text
        assert "token" not in r.json()
    assert user_of(await exchange(daemon.http, daemon.url, code)) == "alice"
    assert refused_as_used(await exchange(daemon.http, daemon.url, code))
