"""A receipt's digest never stops a question's end (protocol section 16,
docs/decisions.md "Receipts"). An action whose arguments hold an integer of
309 digits (taken before askd refused it at the door) could not be ended at
all: every way to end it was a 500, RFC 8785 raising on the integer. Each
way now ends it, durable, its waiters woken, its result without
``receipt``, and the log says why with its ids."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from io import StringIO
from typing import Any

import pytest

from askd.protocol import codec
from tests.conftest import RunningDaemon, WsClient, eventually
from tests.system.wire.test_approvals import reply, until

BIG = int("9" * 309)


@pytest.fixture
def before_the_door(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """The door as it was before askd refused integers beyond I-JSON: such
    a question is taken, as a daemon before the upgrade stored it. Returns
    the call that puts today's door back."""
    monkeypatch.setattr(codec, "beyond_ijson", lambda obj, limit=codec.MAX_NAMED: [])
    return monkeypatch.undo


async def stored_before(daemon: RunningDaemon, session: str, *, to: tuple[str, ...] = ("alice",), **body: Any) -> str:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions",
        content=json.dumps({"to": list(to), "action": {"name": "deploy", "arguments": {"n": BIG}}, **body}),
        headers={**daemon.agent_headers, "Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


def logged(log_text: StringIO, event: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, log_text.getvalue().splitlines()) if e.get("event") == event]


async def by_agent_withdraw(d: RunningDaemon, tab: WsClient, rid: str) -> None:
    r = await d.http.delete(f"{d.url}/v1/sessions/s1/questions/{rid}", headers=d.agent_headers)
    assert r.status_code == 200 and r.json()["status"] == "cancelled" and "receipt" not in r.json(), r.text


async def by_agent_cancel(d: RunningDaemon, tab: WsClient, rid: str) -> None:
    r = await d.http.post(f"{d.url}/v1/sessions/s1/cancel", headers=d.agent_headers)
    assert r.status_code == 200 and r.json() == {"cancelled": 1}, r.text


End = Callable[[RunningDaemon, WsClient, str], Awaitable[None]]


def by_admin(path: str, body: dict[str, Any] | None) -> End:
    async def end(d: RunningDaemon, tab: WsClient, rid: str) -> None:
        r = await d.admin("POST", path.replace("RID", rid), json=body)
        assert r.status_code == 200, r.text

    return end


def by_tab(kind: str) -> End:
    async def end(d: RunningDaemon, tab: WsClient, rid: str) -> None:
        await tab.send({"type": kind, "sessionId": "s1", "requestId": rid, "id": "end"})
        answer = await reply(tab, "end")
        assert answer["type"] == "ack" and answer["payload"]["accepted"] is True, answer

    return end


WAYS: dict[str, End] = {
    "agent withdraw": by_agent_withdraw,
    "agent session cancel": by_agent_cancel,
    "admin approve": by_admin("/admin/v1/sessions/s1/questions/RID/approve", {}),
    "admin decline": by_admin("/admin/v1/sessions/s1/questions/RID/decline", {"reason": "no"}),
    "admin cancel": by_admin("/admin/v1/sessions/s1/cancel", None),
    "tab approve": by_tab("approve"),
    "tab decline": by_tab("decline"),
}
STATUS = {"approve": "answered", "decline": "declined"}


@pytest.mark.parametrize("way", WAYS, ids=list(WAYS))
async def test_every_way_ends_a_question_whose_digest_cannot_be_taken(
    daemon: RunningDaemon, before_the_door: Callable[[], None], log_text: StringIO, way: str
) -> None:
    tab = await daemon.connect("alice")
    rid = await stored_before(daemon, "s1")
    before_the_door()
    await tab.expect("ask_user_questions")
    waiting = asyncio.ensure_future(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid))
    await WAYS[way](daemon, tab, rid)
    woken = await asyncio.wait_for(waiting, 5)
    result = woken.json()
    expected = next((s for k, s in STATUS.items() if way.endswith(k)), "cancelled")
    assert woken.status_code == 200 and result["status"] == expected and "receipt" not in result, result
    assert (await daemon.result("s1", rid)).json() == result  # durable, read again alike
    [line] = logged(log_text, "receipt.no_digest")
    assert (line["level"], line["sessionId"], line["requestId"]) == ("error", "s1", rid)
    assert (await until(tab, "ask_user_questions_cancelled"))["payload"]["requestId"] == rid  # the tab is told


async def test_its_deadline_ends_it_and_the_next_question_s_too(
    daemon: RunningDaemon, before_the_door: Callable[[], None], log_text: StringIO
) -> None:
    rid = await stored_before(daemon, "s1", timeoutSeconds=0.3)
    before_the_door()
    innocent = await daemon.ask("s2", "alice", timeoutSeconds=0.6)
    assert (await daemon.result("s2", innocent["requestId"], wait=5)).json()["status"] == "timeout"
    result = (await daemon.result("s1", rid)).json()
    assert result["status"] == "timeout" and "receipt" not in result
    assert [e["requestId"] for e in logged(log_text, "receipt.no_digest")] == [rid]
    assert logged(log_text, "deadline.failed") == []
