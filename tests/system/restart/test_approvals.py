"""Approvals across ``kill -9`` of a real ``askd serve`` on SQLite: an
approval acknowledged is written before its ack, so the first approval of a
quorum of two survives the crash; the restarted daemon re-pushes it, refuses
the same person again, and the second approval ends it approved."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunningDaemon
from tests.system.restart import restart, running

DEPLOY = {"name": "deploy", "arguments": {"env": "prod"}, "allowAlways": True}


async def approve(tab: object, rid: str, id_: str, **extra: object) -> dict[str, object]:
    await tab.send({"type": "approve", "sessionId": "s1", "requestId": rid, "id": id_, **extra})  # type: ignore[attr-defined]
    while True:
        frame = await tab.recv()  # type: ignore[attr-defined]
        if frame.get("id") == id_:
            return frame  # type: ignore[no-any-return]


async def test_an_approval_survives_kill_9_between_two_of_a_quorum(tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        assert isinstance(d, RunningDaemon)
        body = {"to": ["alice", "bob"], "action": DEPLOY, "quorum": 2, "timeoutSeconds": 120}
        r = await d.http.post(f"{d.url}/v1/sessions/s1/questions", json=body, headers=d.agent_headers)
        assert r.status_code == 201, r.text
        rid = r.json()["requestId"]
        alice = await d.connect("alice")
        await alice.subscribe("s1")
        ack = await approve(alice, rid, "a", scope="always")
        assert ack["payload"] == {"accepted": True, "approvals": 1, "needed": 2}

        await restart(d.daemon, "kill")  # kill -9 right after the ack

        pending = (await d.result("s1", rid)).json()
        assert pending["status"] == "pending" and [a["by"] for a in pending["approvals"]] == ["alice"]
        alice = await d.connect("alice")
        frames = await alice.subscribe("s1")
        [pushed] = [f for f in frames if f["type"] == "ask_user_questions"]
        assert [a["by"] for a in pushed["payload"]["approvals"]] == ["alice"] and pushed["payload"]["quorum"] == 2
        assert (await approve(alice, rid, "again"))["payload"] == {"accepted": False, "reason": "already_voted"}
        bob = await d.connect("bob")
        await bob.subscribe("s1")
        assert (await approve(bob, rid, "b", scope="always"))["payload"] == {"accepted": True, "approvals": 2, "needed": 2}
        done = (await d.result("s1", rid)).json()
        assert (done["status"], done["approved"], done["scope"]) == ("answered", True, "always")
        assert [a["by"] for a in done["approvals"]] == ["alice", "bob"]

        await restart(d.daemon, "kill")  # and the ended result, with its receipt, survives too
        again = (await d.result("s1", rid)).json()
        assert again == done
