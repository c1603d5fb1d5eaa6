"""The audit trail across ``kill -9`` of a real ``askd serve`` on SQLite:
a record is written in the transaction of its change, so an answer
acknowledged keeps its record, with no gap, and the chain goes on after."""

from __future__ import annotations

import json
from pathlib import Path

from askd.audit.chain import verify
from tests.conftest import RunningDaemon
from tests.system.restart import restart, running


async def test_an_answer_acknowledged_keeps_its_record_across_kill_9(tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        assert isinstance(d, RunningDaemon)
        alice = await d.connect("alice")
        rid = (await d.ask("s1", "alice", timeoutSeconds=120))["requestId"]
        await alice.expect("ask_user_questions")
        assert (await alice.answer("s1", rid, {"Which database?": "Postgres"}))["payload"] == {"accepted": True}

        await restart(d.daemon, "kill")  # kill -9 right after the ack

        r = await d.admin("GET", "/admin/v1/audit")
        records = [json.loads(line) for line in r.text.splitlines()]
        assert [(x["seq"], x["event"]) for x in records] == [(1, "asked"), (2, "answered")]
        await d.ask("s2", "alice")
        r = await d.admin("GET", "/admin/v1/audit")
        records = [json.loads(line) for line in r.text.splitlines()]
        assert [x["seq"] for x in records] == [1, 2, 3] and verify(records).problem is None


async def test_the_history_index_outlives_a_restart(tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        assert isinstance(d, RunningDaemon)
        first = (await d.ask("s1", "alice", timeoutSeconds=120))["requestId"]
        await d.admin("POST", f"/admin/v1/sessions/s1/questions/{first}/answer", json={"answers": {"Which database?": "a"}})
        pending = (await d.ask("s2", "alice", timeoutSeconds=120))["requestId"]  # ends after the restart

        await restart(d.daemon, "kill")

        await d.admin("POST", "/admin/v1/sessions/s2/cancel")
        token = d.token("user", "alice")
        r = await d.http.get(f"{d.url}/v1/me/history", headers={"Authorization": f"Bearer {token}"})
        assert [(e["requestId"], e["status"]) for e in r.json()["questions"]] == [(pending, "cancelled"), (first, "answered")]
