"""The SQLite trail's head after a restart: its last record's, or, when a
prune left none, the one the prune kept; a chain goes on from it either way."""

from __future__ import annotations

import itertools
from pathlib import Path

from askd.audit.chain import verify
from askd.core import AskInput, Limits
from askd.core.registry import Registry
from askd.store.sqlite import SqliteStore


async def ask(store: SqliteStore, reg: Registry, session: str) -> None:
    _, change = reg.prepare_ask(AskInput(session, "alice", [{"question": "Deploy?"}]))
    assert change is not None
    for taken in await store.commit([change]):
        reg.apply(taken)


def registry(prefix: str = "r") -> Registry:
    ids = itertools.count(1)
    return Registry(Limits(question_timeout=900), new_id=lambda: f"{prefix}{next(ids)}")


async def two_asked(path: Path) -> SqliteStore:
    """A store at ``path`` whose trail holds two records."""
    store = SqliteStore(path)
    reg = registry()
    for s in ("s1", "s2"):
        await ask(store, reg, s)
    return store


async def test_a_restart_goes_on_from_the_last_record(tmp_path: Path) -> None:
    store = await two_asked(tmp_path / "askd.db")
    before = await store.audit.head()
    store.close()

    store = SqliteStore(tmp_path / "askd.db")
    try:
        assert await store.audit.head() == before and before is not None and before["seq"] == 2
        await ask(store, registry("later-"), "s3")
        records = await store.audit.page(0, 10)
        assert [r["seq"] for r in records] == [1, 2, 3] and verify(records).problem is None
    finally:
        store.close()


async def test_a_restart_after_every_record_was_pruned_goes_on_from_the_kept_head(tmp_path: Path) -> None:
    store = await two_asked(tmp_path / "askd.db")
    head = await store.audit.head()
    assert head is not None
    assert await store.audit.prune("9999-12-31T23:59:59.999Z") == 2 and await store.audit.count() == 0
    store.close()

    store = SqliteStore(tmp_path / "askd.db")
    try:
        assert await store.audit.head() == head
        await ask(store, registry("later-"), "s3")
        (record,) = await store.audit.page(0, 10)
        assert (record["seq"], record["prev"]) == (3, head["hash"])
    finally:
        store.close()
