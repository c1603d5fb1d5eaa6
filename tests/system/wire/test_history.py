"""``GET /v1/me/history`` fits its one definition (askd.protocol.history,
which ``askd schema`` and the JavaScript client's types come from) for every
way a question ends: answered, declined, timed out, cancelled, withdrawn;
and each names its question (``header``): its header, else the plain text
of its first question, cut when long."""

from __future__ import annotations

import json

from askd.audit.chain import verify
from askd.protocol.history import HistoryBody
from tests.conftest import RunningDaemon, eventually, q
from tests.protocol.test_shapes import fits

LONG = "Rotate the keys and restart every node in every region, " * 6 + "now?"
FIELDS = {"seq", "at", "event", "sessionId", "requestId", "by", "via", "data", "prev", "hash"}


async def test_every_end_fits_the_history_shape(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    answered = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no", header="Deploy")]))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", answered, {"Deploy?": "yes"}))["type"] == "ack"
    declined = (await daemon.ask("s2", "alice", [q("Drop the **staging** `db`?\n\nIt holds *nothing*.")]))["requestId"]
    await tab.send({"type": "decline", "sessionId": "s2", "requestId": declined, "reason": "no", "id": "d"})
    timed_out = (await daemon.ask("s3", "alice", [q(LONG)], timeoutSeconds=0.2))["requestId"]
    cancelled = (await daemon.ask("s4", "alice", [q("Later?", header="Wait")]))["requestId"]
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s4/cancel", headers=daemon.agent_headers)
    assert r.status_code == 200, r.text
    withdrawn = (await daemon.ask("s5", "alice", [q("Never [ever](https://x.example)?"), q("Really?", header="Sure")]))["requestId"]
    r = await daemon.http.delete(f"{daemon.url}/v1/sessions/s5/questions/{withdrawn}", headers=daemon.agent_headers)
    assert r.status_code == 200, r.text
    headers = {"Authorization": f"Bearer {daemon.token('user', 'alice')}"}

    async def history() -> dict[str, object]:
        r = await daemon.http.get(f"{daemon.url}/v1/me/history", headers=headers)
        assert r.status_code == 200, r.text
        return r.json()

    async def all_ended() -> bool:
        return len((await history())["questions"]) == 5

    await eventually(all_ended)
    body = await history()
    fits(HistoryBody, body)
    seen = {e["requestId"]: (e["status"], e["answeredBy"], e["via"]) for e in body["questions"]}
    assert seen == {
        answered: ("answered", "alice", "ws"),
        declined: ("declined", "alice", "ws"),
        timed_out: ("timeout", None, None),
        cancelled: ("cancelled", None, "agent"),
        withdrawn: ("cancelled", None, "agent"),
    }
    # What each was: long after askd dropped its text (an ended question keeps none).
    assert {e["requestId"]: e["header"] for e in body["questions"]} == {
        answered: "Deploy",
        declined: "Drop the staging db?",
        timed_out: LONG[:199].rstrip() + "…",
        cancelled: "Wait",
        withdrawn: "Never ever?",
    }
    # The trail's records are as section 19 lists them: no title, no text.
    r = await daemon.admin("GET", "/admin/v1/audit")
    assert r.status_code == 200, r.text
    records = [json.loads(line) for line in r.text.splitlines()]
    assert len(records) == 10 and all(set(rec) == FIELDS for rec in records)
    assert not any(word in r.text for word in ("Deploy", "staging", "Wait", "Never", "Sure", "Rotate"))
    assert verify(records).problem is None
