"""``GET /v1/me/history`` fits its one definition (askd.protocol.history,
which ``askd schema`` and the JavaScript client's types come from) for every
way a question ends: answered, declined, timed out, cancelled, withdrawn."""

from __future__ import annotations

from askd.protocol.history import HistoryBody
from tests.conftest import RunningDaemon, eventually, q
from tests.protocol.test_shapes import fits


async def test_every_end_fits_the_history_shape(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    answered = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no", header="Deploy")]))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", answered, {"Deploy?": "yes"}))["type"] == "ack"
    declined = (await daemon.ask("s2", "alice", [q("Drop?")]))["requestId"]
    await tab.send({"type": "decline", "sessionId": "s2", "requestId": declined, "reason": "no", "id": "d"})
    timed_out = (await daemon.ask("s3", "alice", [q("Soon?")], timeoutSeconds=0.2))["requestId"]
    cancelled = (await daemon.ask("s4", "alice", [q("Later?")]))["requestId"]
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s4/cancel", headers=daemon.agent_headers)
    assert r.status_code == 200, r.text
    withdrawn = (await daemon.ask("s5", "alice", [q("Never?")]))["requestId"]
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
