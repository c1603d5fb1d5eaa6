"""Spec R across a restart of a real ``askd serve`` on SQLite: an away kept
goes on after a restart before its ``until``, and one whose ``until``
passed while no daemon ran ends at start (the delegate loses the question)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from tests.system.restart import restart, running


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat().replace("+00:00", "Z")


async def test_an_away_past_until_ends_at_start_and_one_before_it_goes_on(tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        svc = d.daemon
        rid = (await d.ask("s1", "alice", timeoutSeconds=600))["requestId"]
        until = time.time() + 2.0
        r = await d.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(until), "delegates": ["bob"]})
        assert r.status_code == 200, r.text
        r = await d.admin("PUT", "/admin/v1/users/carol/away", json={"until": rfc3339(time.time() + 3600), "delegates": ["dave"]})
        assert r.status_code == 200, r.text

        await restart(svc, "kill", down_until=until + 0.3)
        assert "away" not in (await d.admin("GET", "/admin/v1/users/alice")).json()  # ended at start
        assert (await d.admin("GET", "/admin/v1/users/carol")).json()["away"]["delegates"] == ["dave"]
        bob = await d.connect("bob")
        frames = await bob.subscribe("*")
        assert [f for f in frames if f["type"] == "ask_user_questions"] == []
        pending = (await d.admin("GET", "/admin/v1/pending", params={"userId": "bob"})).json()["pending"]
        assert pending == []
        # carol's questions still reach dave after the restart
        rid2 = (await d.ask("s2", "carol"))["requestId"]
        dave = await d.connect("dave")
        frames = await dave.subscribe("*")
        assert [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"] == [rid2]
        # alice's question goes on for her
        [mine] = (await d.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
        assert mine["requestId"] == rid
