"""A question's reminders (``remind``) are kept by every durable store: a
fresh load (a restart on SQLite, another node on Redis) schedules them again,
and another Redis node following the stream gets them with the ask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askd.core import AskInput, Limits, NotifyPolicy
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store import Store
from askd.store.redis import change_json
from tests.store.test_approvals_kept import Listening, stores

NOW = 1_800_000_000.0
QS = [{"question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No"}]}]


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_fresh_load_keeps_the_reminders(kind: str, tmp_path: Path) -> None:
    with stores(kind, tmp_path) as opened:
        first = opened("node0")
        reg = Registry(Limits(), clock=lambda: NOW, notify=NotifyPolicy())
        restore(await first.load(), reg)
        reminded, asked = reg.prepare_ask(AskInput("s1", "alice", QS, remind=(90.0, 4)))
        plain, asked_plain = reg.prepare_ask(AskInput("s2", "alice", QS))
        assert asked is not None and asked_plain is not None
        for change in (asked, asked_plain):
            assert await first.commit([change]) == [change] and reg.apply(change)
        if kind == "sqlite":
            await first.aclose()
        second = opened("node1")
        fresh = Registry(Limits(), clock=lambda: NOW, notify=NotifyPolicy())
        restore(await second.load(), fresh)
        kept = fresh.get("s1", reminded.request_id)
        assert kept is not None and kept.remind == (90.0, 4)
        assert ("remind", NOW + 90) in {(k, at) for at, k, r in fresh.schedule.entries() if r is kept}
        other = fresh.get("s2", plain.request_id)
        assert other is not None and other.remind is None
        await second.aclose()
        if kind == "redis":
            await first.aclose()


def test_the_stream_carries_the_reminders_with_the_ask() -> None:
    reg = Registry(Limits(), clock=lambda: NOW)
    for remind in ((60.0, 10), None):
        _, asked = reg.prepare_ask(AskInput("s1", "alice", QS, remind=remind))
        assert asked is not None
        back = change_json.from_json(json.loads(change_json.to_json(asked, "node0", 1)))
        assert back.request.remind == remind  # type: ignore[union-attr]
        reg.release(asked)
