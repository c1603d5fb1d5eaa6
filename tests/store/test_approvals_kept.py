"""An action's approvals are kept by every durable store as the engine holds
them: a fresh load (another node's on Redis, a restart on SQLite) restores
the approvals given so far of a pending action and the final record of an
ended one; another Redis node following the stream applies them too."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import shutil
from pathlib import Path
from typing import Any

import pytest

from askd.core import AskInput, Connection, Limits
from askd.core.changes import Change
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store import Store
from askd.store.redis import RedisStore
from askd.store.sqlite import SqliteStore
from tests.support.redis_server import RedisServer

NOW = 1_800_000_000.0
ACTION = {"name": "deploy", "arguments": {"env": "prod"}, "allowAlways": True}


class Listening:
    node_id = "node0"

    def __init__(self) -> None:
        self.changes: list[Change] = []

    def on_changes(self, changes: list[Change]) -> None:
        self.changes.extend(changes)

    def on_failed(self, err: Exception) -> None: ...
    def on_ok(self) -> None: ...
    def on_command(self, command: dict[str, Any]) -> None: ...
    def local_connections(self) -> list[Connection]:
        return []


@contextmanager
def stores(kind: str, tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    """Opens the ``kind`` of store over one place (a file, or a redis-server
    of the test's own, stopped after) as a node would: each call a fresh load."""
    server = None
    if kind == "redis":
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        server = RedisServer(tmp_path / "redis").start()

    def opened(node: str) -> Store:
        store: Store = SqliteStore(tmp_path / "askd.db") if server is None else RedisStore(server.url, node)
        store.attach(Listening())
        return store

    try:
        yield opened
    finally:
        if server is not None:
            server.stop()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_fresh_load_restores_approvals_pending_and_ended(kind: str, tmp_path: Path) -> None:
    with stores(kind, tmp_path) as opened:
        first = opened("node0")
        reg = Registry(Limits(), clock=lambda: NOW)
        restore(await first.load(), reg)
        waiting, asked = reg.prepare_ask(AskInput("s1", "", None, to=("alice", "bob", "carol"), action=ACTION, quorum=3))
        done, asked_done = reg.prepare_ask(AskInput("s2", "", None, to=("alice", "bob"), action=ACTION, quorum=2))
        assert asked is not None and asked_done is not None
        for change in [asked, asked_done]:
            assert await first.commit([change]) == [change] and reg.apply(change)
        for rid, user, scope in ((waiting.request_id, "alice", "always"), (done.request_id, "alice", "always"),
                                 (done.request_id, "bob", "always")):
            change = reg.prepare_approve("s1" if rid == waiting.request_id else "s2", rid, user_id=user, scope=scope)
            assert await first.commit([change]) == [change] and reg.apply(change)
        if kind == "sqlite":
            await first.aclose()
        second = opened("node1")
        fresh = Registry(Limits(), clock=lambda: NOW)
        restore(await second.load(), fresh)
        kept = fresh.get("s1", waiting.request_id)
        assert kept is not None and kept.pending and kept.approval == waiting.approval and kept.approvals == 1
        assert kept.push_fields()["approvals"] == waiting.push_fields()["approvals"]
        ended = fresh.get("s2", done.request_id)
        assert ended is not None and ended.result() == done.result() and ended.digest == done.digest
        # The approval count each write compares is the one kept: a stale approval is refused here too.
        stale = reg.prepare_approve("s1", waiting.request_id, user_id="bob")
        moved = fresh.prepare_approve("s1", waiting.request_id, user_id="carol")
        assert await second.commit([moved]) == [moved]
        assert await second.commit([stale]) == []
        await second.aclose()
        if kind == "redis":
            await first.aclose()
