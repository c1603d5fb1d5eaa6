"""An ask's ``hostKey`` (protocol section 5) is kept by every durable store
as its SHA-256 only: after a fresh load (a restart on SQLite, another node
on Redis) its own host still relays, and another key is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from askd.core import AskInput, Forbidden, Limits
from askd.core.registry.decisions import Relay
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.protocol.relay import host_key_hash
from askd.store import Store
from tests.store.test_approvals_kept import ACTION, NOW, Listening, stores

KEY = "k" * 32


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_fresh_load_keeps_the_hash_of_the_host_key(kind: str, tmp_path: Path) -> None:
    with stores(kind, tmp_path) as opened:
        first = opened("node0")
        reg = Registry(Limits(), clock=lambda: NOW)
        restore(await first.load(), reg)
        hashed = host_key_hash(KEY)
        req, asked = reg.prepare_ask(AskInput("s1", "", None, to=("alice", "bob"), action=ACTION, quorum=2, host_key_hash=hashed))
        plain, asked_plain = reg.prepare_ask(AskInput("s2", "alice", None, action=ACTION))
        assert asked is not None and asked_plain is not None
        for change in (asked, asked_plain):
            assert await first.commit([change]) == [change] and reg.apply(change)
        if kind == "sqlite":
            await first.aclose()
        second = opened("node1")
        fresh = Registry(Limits(), clock=lambda: NOW)
        restore(await second.load(), fresh)
        kept, kept_plain = fresh.get("s1", req.request_id), fresh.get("s2", plain.request_id)
        assert kept is not None and kept_plain is not None
        assert (kept.host_key_hash, kept_plain.host_key_hash) == (hashed, None)
        assert hashed is not None and KEY not in hashed  # the key itself is nowhere
        fresh.prepare_approve("s1", req.request_id, user_id="alice", via="mcp", relay=Relay(None, hashed))
        with pytest.raises(Forbidden):
            fresh.prepare_approve("s1", req.request_id, user_id="alice", via="mcp", relay=Relay(None, host_key_hash("o" * 32)))
        with pytest.raises(Forbidden):
            fresh.prepare_approve("s2", plain.request_id, user_id="alice", via="mcp", relay=Relay(None, hashed))
        await second.aclose()
        if kind == "redis":
            await first.aclose()
