"""Each store's claim of a mail (question, escalation step, recipient) and
its users' addresses: the first claim wins and a second never does, on
SQLite after the file is opened again too, and a question's claims go once
it could no longer be pending, the same on every store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from askd.channels.channel import OnceKey
from askd.channels.once import take
from askd.core import Request
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.core.changes import Asked
from askd.store import Store
from askd.store.memory import MemoryStore
from askd.store.parts import EMAIL, mail_key, notify_key, open_key
from askd.store.sqlite import SqliteStore
from tests.store.test_take_effect import loaded



@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(request.param, tmp_path) as opened:
        yield opened


def req(rid: str = "r1") -> Request:
    # Now, not at import: a claim lasts until the question could no longer
    # be pending, so a time taken at collection is past by the time a long
    # run reaches this test, and every claim would win again.
    now = time.time()
    return Request(rid, "s1", "alice", now, now + 60)


async def claim_mails(store: Store, r: Request, step: int, users: list[str]) -> list[str]:
    """Of ``users``, in order, those whose mail about ``r`` at ``step`` this
    call claims first: one claim per delivery, as the delivery worker makes
    it (``askd.channels.once.take``)."""
    return [u for u in users if await take(store, OnceKey.of("mail", r, step, u))]


async def user_emails(store: Store, users: list[str]) -> dict[str, str]:
    return await store.directory.get(EMAIL, users)


async def set_user_email(store: Store, user: str, email: str | None) -> None:
    await store.directory.set(EMAIL, user, email)


async def test_the_first_claim_wins_per_step_and_recipient(store: Store) -> None:
    r = req()
    assert await claim_mails(store, r, 0, ["alice", "bob", "alice"]) == ["alice", "bob"]
    assert await claim_mails(store, r, 0, ["bob", "carol"]) == ["carol"]
    assert await claim_mails(store, r, 1, ["bob"]) == ["bob"]  # a step is mailed again
    assert await claim_mails(store, req("r2"), 0, ["alice"]) == ["alice"]
    assert await claim_mails(store, r, 0, []) == []


async def test_addresses_are_kept_replaced_and_forgotten(store: Store) -> None:
    assert await user_emails(store, ["alice"]) == {}
    await set_user_email(store, "alice", "alice@example.com")
    await set_user_email(store, "bob", "bob@example.com")
    await set_user_email(store, "bob", "b@example.com")
    assert await user_emails(store, ["alice", "bob", "carol", "alice"]) == {"alice": "alice@example.com", "bob": "b@example.com"}
    await set_user_email(store, "alice", None)
    await set_user_email(store, "nobody", None)
    assert await user_emails(store, ["alice", "bob"]) == {"bob": "b@example.com"}
    many = [f"u{i}" for i in range(1200)]  # more than one statement's parameters
    for u in many[::100]:
        await set_user_email(store, u, f"{u}@example.com")
    assert len(await user_emails(store, many)) == 12


async def test_sqlite_keeps_claims_and_addresses_across_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    db = SqliteStore(path)
    restore(await db.load(), Registry())
    r = req()
    r.frame = b"{}"
    await db.commit([Asked(r, None)])
    assert await claim_mails(db, r, 0, ["alice"]) == ["alice"]
    await set_user_email(db, "alice", "alice@example.com")
    await db.aclose()

    db = SqliteStore(path)
    restore(await db.load(), Registry())
    try:
        assert await claim_mails(db, r, 0, ["alice"]) == []
        assert await user_emails(db, ["alice"]) == {"alice": "alice@example.com"}
    finally:
        await db.aclose()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_questions_claims_are_kept_while_it_could_be_pending_then_go(kind: str, tmp_path: Path) -> None:
    """One rule on every store (it was: SQLite and memory dropped them with
    the Forgot, Redis on a timer): a mail's claim is kept until the question
    could no longer be pending (every extension taken, and a minute), on the
    store's clock, then the key is free and nothing of it is kept."""
    r = req()
    r.max_extension = 30.0
    until = r.expires_at + r.max_extension + 60
    clock = Clock(until - 0.4)  # Redis counts the claim's life from this clock
    async with loaded(kind, tmp_path, clock) as store:
        assert await claim_mails(store, r, 0, ["alice"]) == ["alice"]
        clock.now += 0.3
        assert await claim_mails(store, r, 0, ["alice"]) == []  # kept, even with the question forgotten
        await asyncio.sleep(0.5)  # Redis's own time: its key lives 0.4 s
        clock.now += 0.3
        assert await claim_mails(store, req("r2"), 0, ["bob"]) == ["bob"]
        if isinstance(store, SqliteStore):
            assert store._db.execute("SELECT key FROM claims").fetchall() == [("mail:r2:0:bob",)]
        if isinstance(store, MemoryStore):
            assert list(store.once_keys._until) == ["mail:r2:0:bob"]  # noqa: SLF001
        assert await claim_mails(store, r, 0, ["alice"]) == ["alice"]  # free again


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_claims_are_one_kind_of_key(kind: str, tmp_path: Path) -> None:
    """The three claims are keys of one ``claims.claim``: a mail's, a
    webhook's and a code's are distinct keys, each won once."""
    r = req()
    async with loaded(kind, tmp_path) as store:
        later = time.time() + 60
        assert await store.once_keys.take(mail_key(r.request_id, 0, "alice"), later)
        assert await claim_mails(store, r, 0, ["alice"]) == []  # the same key
        assert await store.once_keys.take(notify_key(r.request_id, 0), later)
        assert not await store.once_keys.take(notify_key(r.request_id, 0), later)
        assert await store.once_keys.take(notify_key(r.request_id, 1), later)
        assert await store.once_keys.take(open_key("j1"), later)
        assert not await store.once_keys.take(open_key("j1"), later)


async def test_the_directory_keeps_settings_by_name(store: Store) -> None:
    """E-mail addresses are the directory's ``email`` setting; a setting it
    does not know is a caller's bug, refused."""
    await store.directory.set("email", "alice", "alice@example.com")
    assert await user_emails(store, ["alice"]) == {"alice": "alice@example.com"}
    await set_user_email(store, "bob", "bob@example.com")
    assert await store.directory.get("email", ["alice", "bob", "carol"]) == {
        "alice": "alice@example.com",
        "bob": "bob@example.com",
    }
    with pytest.raises(ValueError):  # (slack is one now: a name no setting has)
        await store.directory.get("nickname", ["alice"])
    with pytest.raises(ValueError):
        await store.directory.set("nickname", "alice", "Al")


async def test_a_webhooks_claim_is_the_clusters_only(store: Store) -> None:
    """A webhook's claim (``notify:``) always wins on a store one daemon
    owns, so a webhook not delivered before a restart is sent after it; on a
    shared store the first node's claim wins, per escalation step."""
    r = req()
    first = await take(store, OnceKey.of("notify", r, 0))
    again = await take(store, OnceKey.of("notify", r, 0))
    assert first and again == (not store.shared)
    assert await take(store, OnceKey.of("notify", r, 1))
