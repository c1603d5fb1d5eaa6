"""Each store's claim of a mail (question, escalation step, recipient) and
its users' addresses: the first claim wins and a second never does, on
SQLite after the file is opened again too, and a forgotten question's
claims go with it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from askd.core import AskInput, Request
from askd.core.registry import Registry
from askd.core.changes import Asked, Change, Ended, Forgot
from askd.core.lifecycle import TIMEOUT_ERROR, Trigger
from askd.store import Store
from askd.store.memory import MemoryStore
from askd.store.sqlite import SqliteStore
from tests.store.test_take_effect import Quiet, loaded

NOW = time.time()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(request.param, tmp_path) as opened:
        yield opened


def req(rid: str = "r1") -> Request:
    return Request(rid, "s1", "alice", NOW, NOW + 60)


async def test_the_first_claim_wins_per_step_and_recipient(store: Store) -> None:
    r = req()
    assert await store.claim_mails(r, 0, ["alice", "bob", "alice"]) == ["alice", "bob"]
    assert await store.claim_mails(r, 0, ["bob", "carol"]) == ["carol"]
    assert await store.claim_mails(r, 1, ["bob"]) == ["bob"]  # a step is mailed again
    assert await store.claim_mails(req("r2"), 0, ["alice"]) == ["alice"]
    assert await store.claim_mails(r, 0, []) == []


async def test_addresses_are_kept_replaced_and_forgotten(store: Store) -> None:
    assert await store.user_emails(["alice"]) == {}
    await store.set_user_email("alice", "alice@example.com")
    await store.set_user_email("bob", "bob@example.com")
    await store.set_user_email("bob", "b@example.com")
    assert await store.user_emails(["alice", "bob", "carol", "alice"]) == {"alice": "alice@example.com", "bob": "b@example.com"}
    await store.set_user_email("alice", None)
    await store.set_user_email("nobody", None)
    assert await store.user_emails(["alice", "bob"]) == {"bob": "b@example.com"}
    many = [f"u{i}" for i in range(1200)]  # more than one statement's parameters
    for u in many[::100]:
        await store.set_user_email(u, f"{u}@example.com")
    assert len(await store.user_emails(many)) == 12


async def test_sqlite_keeps_claims_and_addresses_across_a_reopen_and_forgets_claims_with_the_question(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    db = SqliteStore(path)
    reg = Registry()
    await db.load(reg)
    r = req()
    r.frame = b"{}"
    await db.commit([Asked(r, None)])
    assert await db.claim_mails(r, 0, ["alice"]) == ["alice"]
    await db.set_user_email("alice", "alice@example.com")
    await db.aclose()

    db = SqliteStore(path)
    await db.load(Registry())
    try:
        assert await db.claim_mails(r, 0, ["alice"]) == []
        assert await db.user_emails(["alice"]) == {"alice": "alice@example.com"}
        await db.commit([Ended(r.session_id, r.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, NOW)])
        assert await db.commit([Forgot(r.session_id, r.request_id)])
        assert db._db.execute("SELECT count(*) FROM mail_claims").fetchone()[0] == 0
    finally:
        await db.aclose()


async def test_memory_forgets_claims_with_the_question() -> None:
    reg = Registry(clock=lambda: NOW)
    mem = MemoryStore()
    mem.attach(Quiet())
    await mem.load(reg)

    async def commit(change: Change) -> None:
        for took in await mem.commit([change]):
            assert reg.apply(took)

    r, asked = reg.prepare_ask(AskInput("s1", "alice", [{"question": "Mail?"}]))
    assert asked is not None
    await commit(asked)
    assert await mem.claim_mails(r, 0, ["alice"]) == ["alice"]
    await commit(Ended(r.session_id, r.request_id, Trigger.EXPIRE, None, TIMEOUT_ERROR, NOW))
    assert await mem.claim_mails(r, 0, ["alice"]) == []  # ended, still held
    await commit(Forgot(r.session_id, r.request_id))
    assert mem._mailed == {}  # noqa: SLF001  (nothing kept for a question that is gone)
