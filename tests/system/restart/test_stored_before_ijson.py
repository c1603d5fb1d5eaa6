"""An upgrade onto questions a daemon took before askd refused integers
beyond I-JSON (protocol section 16): one whose action holds an integer of
309 digits, due while no daemon ran, used to raise in the clock at start,
so an innocent question stayed pending past its expiry until another ask
came. Now ``askd serve`` on the same SQLite state ends it at start without
a receipt (logged with its ids), and the innocent one's deadline comes on
time, with no ask to wake the timer."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from askd.protocol import codec
from tests.support.askd_process import Service
from tests.conftest import SECRET, RunningDaemon, running_daemon
from tests.system.restart import epoch

pytestmark = pytest.mark.asyncio

BIG = "9" * 309
ON_TIME = 0.5  # how late a deadline may come on a busy machine


async def test_a_question_stored_before_the_upgrade_ends_at_start_and_stops_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The door as it was: the question is taken and stored.
    with monkeypatch.context() as before:
        before.setattr(codec, "beyond_ijson", lambda obj, limit=0: [], raising=False)
        async with running_daemon(tmp_path, "sqlite", {}, None) as old:
            r = await old.http.post(
                f"{old.url}/v1/sessions/old/questions",
                content=b'{"to": ["alice"], "timeoutSeconds": 0.2, "action": {"name": "deploy", "arguments": {"n": %s}}}' % BIG.encode(),
                headers={**old.agent_headers, "Content-Type": "application/json"},
            )
            assert r.status_code == 201, r.text
            planted = r.json()
            # Long enough to outlast a cold start of askd serve on a busy machine.
            innocent = await old.ask("new", "bob", timeoutSeconds=8)

    svc = Service(tmp_path / "state", env={"ASKD_AUTH__SECRET": SECRET})
    try:
        process = await svc.start()
        async with httpx.AsyncClient(timeout=30) as http:
            d = RunningDaemon(svc, http)
            assert time.time() < epoch(innocent["expiresAt"]) - ON_TIME, "askd took too long to start for this test"
            result = (await d.result("old", planted["requestId"], wait=5)).json()
            assert result["status"] == "timeout" and "receipt" not in result, result
            # No ask, no answer: only the timer can end it, on time.
            result = (await d.result("new", innocent["requestId"], wait=10)).json()
            assert result["status"] == "timeout" and "receipt" in result, result
            assert time.time() - epoch(innocent["expiresAt"]) < ON_TIME
            health = (await http.get(f"{svc.admin_url}/healthz")).json()
            assert health["status"] == "ok" and health["deadlines"]["failing"] == 0, health
        assert await svc.stop() == 0
        errors = [json.loads(line) for line in process.error_lines()]
        assert [(e["event"], e["requestId"]) for e in errors] == [("receipt.no_digest", planted["requestId"])], process.log_text()
    finally:
        await svc.close()
