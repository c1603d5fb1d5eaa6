"""More time and safe defaults across a restart of ``askd serve`` on the
SQLite store (``kill -9`` and SIGTERM): an extension survives it, a deadline
it moved that passed while no daemon ran ends at start, once, and a default
due while down is taken at start."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import eventually, q
from tests.system.restart import HOW, epoch, restart, running

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("how", HOW)
async def test_extensions_and_defaults_survive_a_restart(how: str, tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        tab = await d.connect("alice")
        # Extended past the down time: still pending after, with the moved deadline.
        kept = await d.ask("kept", "alice", [q("Deploy?")], timeoutSeconds=1, maxExtensionSeconds=120)
        await tab.expect("ask_user_questions")
        await tab.send({"type": "extend", "sessionId": "kept", "requestId": kept["requestId"], "seconds": 120, "id": "x"})
        moved = (await tab.recv())["payload"]["expiresAt"]
        await tab.expect("ask_user_questions_extended")
        # Extended by the agent, to a deadline that passes while askd is down.
        late = await d.ask("late", "alice", [q("Tag?")], timeoutSeconds=1)
        await tab.expect("ask_user_questions")
        r = await d.http.post(
            f"{d.url}/v1/sessions/late/questions/{late['requestId']}/extend", json={"seconds": 1}, headers=d.agent_headers
        )
        late_at = r.json()["expiresAt"]
        assert (await tab.expect("ask_user_questions_extended"))["payload"]["expiresAt"] == late_at
        assert epoch(late_at) == pytest.approx(epoch(late["expiresAt"]) + 1, abs=0.002)
        # A default due while askd is down.
        dflt = await d.ask(
            "dflt", "alice", [q("Ship?", "Yes", "No")], timeoutSeconds=1, onTimeout={"answers": {"Ship?": "No"}}
        )

        process = await restart(d.daemon, how, down_until=max(epoch(late_at), epoch(dflt["expiresAt"])) + 0.5)
        for rid in (late["requestId"], dflt["requestId"]):
            await eventually(lambda rid=rid: any(e.get("requestId") == rid for e in process.named("question.timeout")))
        assert time.time() < epoch(moved)

        result = (await d.result("kept", kept["requestId"])).json()
        assert (result["status"], result["expiresAt"]) == ("pending", moved)
        tab = await d.connect("alice")
        [pushed] = [f for f in await tab.subscribe("*") if f["type"] == "ask_user_questions"]
        assert pushed["payload"]["expiresAt"] == moved  # a re-push carries the deadline as extended
        # The allowance used survived too: 120 of 120.
        await tab.send({"type": "extend", "sessionId": "kept", "requestId": kept["requestId"], "seconds": 1, "id": "y"})
        assert (await tab.recv())["payload"] == {"extended": False, "reason": "not_allowed"}

        assert (await d.result("late", late["requestId"])).json()["status"] == "timeout"
        result = (await d.result("dflt", dflt["requestId"])).json()
        assert (result["status"], result["answers"], result["defaulted"]) == ("timeout", {"Ship?": "No"}, True)
        # Each ended once: one line each.
        for rid in (late["requestId"], dflt["requestId"]):
            assert sum(e.get("requestId") == rid for e in process.named("question.timeout")) == 1
