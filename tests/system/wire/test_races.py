"""The races of the model test, over real sockets and many times each.

Each test starts ``ROUNDS`` independent races at once (one user, session and
pair of tabs per race, so they cannot disturb each other) and checks that
every race had exactly one outcome, and the same one everywhere: in the
acks the tabs got, in the ``ask_user_questions_cancelled`` every tab got
(once), and in the result the waiting agent got.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.receipts.independent import receipted

ROUNDS = 30
QUESTION = q("Ship it?", "yes", "no")


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class Tab:
    """A tab that insists every question ends exactly once on it."""

    def __init__(self, client: WsClient) -> None:
        self.client = client
        self.ended: dict[str, str] = {}  # requestId -> reason
        self.conn_id = ""

    async def until_ended(self, rid: str) -> str:
        """Read frames until ``rid`` ends; a second end of anything fails."""
        while rid not in self.ended:
            frame = await self.client.recv()
            if frame["type"] == "ask_user_questions_cancelled":
                ended = frame["payload"]["requestId"]
                assert ended not in self.ended, f"{ended} ended twice on one tab"
                self.ended[ended] = frame["payload"]["reason"]
        return self.ended[rid]

    async def answer_frame(self, sid: str, rid: str, answer: str) -> None:
        await self.client.send(
            {"type": "ask_user_questions_result", "sessionId": sid, "requestId": rid, "answers": {"Ship it?": answer}, "id": answer}
        )

    async def subscribe(self, sid: str) -> list[dict[str, Any]]:
        """Subscribe; the re-pushed questions. The frames before the ack may
        also carry live events (on a shared store the ack waits for the
        presence write): an end among them is noted like any other."""
        frames = await self.client.subscribe(sid)
        for frame in frames:
            if frame["type"] == "ask_user_questions_cancelled":
                ended = frame["payload"]["requestId"]
                assert ended not in self.ended, f"{ended} ended twice on one tab"
                self.ended[ended] = frame["payload"]["reason"]
        return [f for f in frames if f["type"] == "ask_user_questions" and f["payload"]["requestId"] not in self.ended]

    async def ack(self, id_: str) -> dict[str, Any]:
        """The reply to the frame with ``id_``, noting any end read on the way."""
        while True:
            frame = await self.client.recv()
            if frame["type"] == "ask_user_questions_cancelled":
                ended = frame["payload"]["requestId"]
                assert ended not in self.ended, f"{ended} ended twice on one tab"
                self.ended[ended] = frame["payload"]["reason"]
            elif frame.get("id") == id_:
                return frame


async def race_setup(daemon: RunningDaemon, user: str, **ask: Any) -> tuple[Tab, Tab, dict[str, Any], asyncio.Task[Any]]:
    """Two tabs of ``user`` that saw the question, and an agent waiting on it."""
    tabs = []
    for _ in range(2):
        tab = Tab(await daemon.connect(user))
        conns = (await daemon.admin("GET", "/admin/v1/connections", params={"userId": user})).json()["connections"]
        tab.conn_id = next(c["connectionId"] for c in conns if c["connectionId"] not in {t.conn_id for t in tabs})
        tabs.append(tab)
    asked = await daemon.ask(user, user, [QUESTION], **ask)
    rid = asked["requestId"]
    for tab in tabs:
        assert (await tab.client.expect("ask_user_questions"))["payload"]["requestId"] == rid
    waiting = asyncio.create_task(daemon.result(user, rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid) or waiting.done())
    return tabs[0], tabs[1], asked, waiting


async def settle(daemon: RunningDaemon, user: str, rid: str, tabs: list[Tab], waiting: asyncio.Task[Any]) -> dict[str, Any]:
    """The agent's result, checked against every tab's end and a later read."""
    result = (await waiting).json()
    reasons = {await tab.until_ended(rid) for tab in tabs}
    assert reasons == {result["status"]}, (reasons, result)
    again = (await daemon.result(user, rid)).json()
    assert again == result, "the result changed after the agent read it"
    return result


async def run_rounds(race: Any) -> Counter[str]:
    outcomes = await asyncio.gather(*(race(f"u{i}") for i in range(ROUNDS)))
    return Counter(outcomes)


async def test_answer_against_the_timeout_at_its_deadline(daemon: RunningDaemon) -> None:
    rng = random.Random(5)

    async def race(user: str) -> str:
        tab, other, asked, waiting = await race_setup(daemon, user, timeoutSeconds=1.0)
        rid, deadline = asked["requestId"], epoch(asked["expiresAt"])
        # Aim at the deadline itself, a few milliseconds either side.
        await asyncio.sleep(max(0.0, deadline - time.time() + rng.uniform(-0.02, 0.02)))
        await tab.answer_frame(user, rid, "yes")
        ack = await tab.ack("yes")
        result = await settle(daemon, user, rid, [tab, other], waiting)
        if ack["payload"]["accepted"]:
            assert receipted(result) == {"requestId": rid, "sessionId": user, "status": "answered", "answers": {"Ship it?": "yes"}, "answeredBy": user, "via": "ws"}
        else:
            assert ack["payload"] == {"accepted": False, "reason": "not_pending"}
            assert result["status"] == "timeout" and "answers" not in result
        return result["status"]

    outcomes = await run_rounds(race)
    assert sum(outcomes.values()) == ROUNDS and set(outcomes) <= {"answered", "timeout"}, outcomes


async def test_answer_against_a_session_cancel(daemon: RunningDaemon) -> None:
    async def race(user: str) -> str:
        tab, other, asked, waiting = await race_setup(daemon, user)
        rid = asked["requestId"]
        await tab.answer_frame(user, rid, "no")
        cancel, ack = await asyncio.gather(
            daemon.http.post(f"{daemon.url}/v1/sessions/{user}/cancel", headers=daemon.agent_headers), tab.ack("no")
        )
        result = await settle(daemon, user, rid, [tab, other], waiting)
        if ack["payload"]["accepted"]:
            assert cancel.json() == {"cancelled": 0}
            assert result["status"] == "answered" and result["answers"] == {"Ship it?": "no"}
        else:
            assert cancel.json() == {"cancelled": 1}
            assert receipted(result) == {"requestId": rid, "sessionId": user, "status": "cancelled", "error": "Session cancelled"}
        return result["status"]

    outcomes = await run_rounds(race)
    assert sum(outcomes.values()) == ROUNDS and set(outcomes) <= {"answered", "cancelled"}, outcomes


async def test_two_tabs_answering_at_once(daemon: RunningDaemon) -> None:
    async def race(user: str) -> str:
        tab1, tab2, asked, waiting = await race_setup(daemon, user)
        rid = asked["requestId"]
        await asyncio.gather(tab1.answer_frame(user, rid, "yes"), tab2.answer_frame(user, rid, "no"))
        acks = await asyncio.gather(tab1.ack("yes"), tab2.ack("no"))
        accepted = [a["id"] for a in acks if a["payload"]["accepted"]]
        assert len(accepted) == 1, acks
        assert [a["payload"] for a in acks if not a["payload"]["accepted"]] == [{"accepted": False, "reason": "not_pending"}]
        result = await settle(daemon, user, rid, [tab1, tab2], waiting)
        assert result["status"] == "answered" and result["answers"] == {"Ship it?": accepted[0]}
        return accepted[0]

    outcomes = await run_rounds(race)
    assert sum(outcomes.values()) == ROUNDS, outcomes


@pytest.mark.parametrize("abort_by", ["client", "admin"])
async def test_answer_then_abort_then_resend_after_reconnect(daemon: RunningDaemon, abort_by: str) -> None:
    async def race(user: str) -> str:
        tab, watcher, asked, waiting = await race_setup(daemon, user)
        rid = asked["requestId"]
        await tab.answer_frame(user, rid, "yes")
        # The link fails right after the answer left: did it arrive? The tab cannot know.
        if abort_by == "client":
            tab.client.conn.transport.abort()
        else:
            await daemon.admin("POST", "/admin/v1/disconnect", json={"connectionId": tab.conn_id, "mode": "abort"})
        fresh = Tab(await daemon.connect(user))
        replay = await fresh.subscribe(user)
        still_pending = rid in [f["payload"]["requestId"] for f in replay]
        await fresh.answer_frame(user, rid, "yes")
        ack = await fresh.ack("yes")
        if not still_pending:  # the first send was taken before the replay: the resend must not be
            assert ack["payload"] == {"accepted": False, "reason": "not_pending"}
        # Either way the question ended once, answered (each tab checks it saw one end).
        result = await settle(daemon, user, rid, [watcher, fresh] if still_pending else [watcher], waiting)
        assert receipted(result) == {"requestId": rid, "sessionId": user, "status": "answered", "answers": {"Ship it?": "yes"}, "answeredBy": user, "via": "ws"}
        return "resend taken" if ack["payload"]["accepted"] else "first send taken"

    outcomes = await run_rounds(race)
    assert sum(outcomes.values()) == ROUNDS, outcomes
