"""The restart matrix (issue #10): a real ``askd serve`` on the SQLite store
is stopped (SIGTERM) or killed (``kill -9``) and started again on the same
ports and state directory. Before the stop each user gets one kind of
state; after the restart each test checks one kind comes back as it was.

alice: pending questions; bob: an answered result nobody read yet; carol:
Idempotency-Keys; dave: a session tree; erin: a question whose deadline
passes while no daemon runs, seen by a ``UserClient`` that rides through.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from askd.client import UserClient
from askd.client.events import ENDED_WHILE_AWAY, CancelledEvent, QuestionEvent
from askd.core.lifecycle import CANCEL_ERROR
from tests.support.askd_process import ServeProcess, Service
from tests.conftest import FRAME_TIMEOUT, RunningDaemon, eventually, q
from tests.system.restart import HOW, epoch, restart, running
from tests.receipts.independent import receipted

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

TTL = 25.0  # result_ttl_seconds: longer than the setup, a restart and the checks before the last one (24 s once on a loaded machine with the suite on four workers)
LATE = 1.0  # erin's question times out while no daemon runs


@dataclass
class World:
    """What the clients saw before the restart, and the restarted daemon."""

    d: RunningDaemon[Service]
    process: ServeProcess  # the one started after the restart
    keep: list[dict[str, Any]] = field(default_factory=list)  # alice's 201 bodies
    keep_listed: list[dict[str, Any]] = field(default_factory=list)  # admin pending for alice
    keep_replayed: list[dict[str, Any]] = field(default_factory=list)  # what a subscribe to * re-pushed
    done: dict[str, Any] = field(default_factory=dict)  # bob: requestId, answers, when
    idem: dict[str, str] = field(default_factory=dict)  # carol: Idempotency-Key -> requestId
    tree: dict[str, str] = field(default_factory=dict)  # dave: session -> requestId
    late: str = ""
    inbox: list[Any] = field(default_factory=list)  # what erin's UserClient handed its application
    user_client: UserClient | None = None


async def before(d: RunningDaemon[Service], w: World) -> None:
    alice = await d.connect("alice")
    await alice.subscribe("*")
    # keep-sub is asked in before its parent keep-top asks anything itself.
    for session, text, parent in (
        ("keep", "Which database?", None),
        ("keep", "Which port?", None),
        ("keep-sub", "Ship it?", "keep-top"),
        ("keep-top", "Tag it?", None),
    ):
        body = {"metadata": {"ticket": text, "n": [1, 2]}} | ({"parentSessionId": parent} if parent else {})
        w.keep.append(await d.ask(session, "alice", [q(text, "yes", "no", header="H")], **body))
        await alice.expect("ask_user_questions")
    w.keep_listed = (await d.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
    w.keep_replayed = [f["payload"] for f in await (await d.connect("alice")).subscribe("*") if f["type"] == "ask_user_questions"]

    bob = await d.connect("bob")
    rid = (await d.ask("done", "bob", [q("Deploy?")]))["requestId"]
    await bob.expect("ask_user_questions")
    answers = {"Deploy?": "tonight"}
    sent = time.time()
    ack = await bob.answer("done", rid, answers)
    assert ack["payload"] == {"accepted": True}, ack
    w.done = {"requestId": rid, "answers": answers, "sent": sent, "acked": time.time()}

    for key, session in (("k-pending", "idem"), ("k-answered", "idem-2")):
        w.idem[key] = (await d.ask(session, "carol", [q("Again?")], headers={"Idempotency-Key": key}))["requestId"]
    r = await d.admin("POST", f"/admin/v1/sessions/idem-2/questions/{w.idem['k-answered']}/answer", json={"answers": {"Again?": "no"}})
    assert r.json() == {"accepted": True}

    # dave: root <- child <- grandchild; the root itself never asks.
    for session, parent in (("child", "root"), ("grandchild", "child")):
        w.tree[session] = (await d.ask(session, "dave", parentSessionId=parent))["requestId"]

    w.user_client = UserClient(d.url, d.token("user", "erin"), backoff_cap=0.5, on_event=w.inbox.append)
    await w.user_client.start()
    await w.user_client.wait_connected(FRAME_TIMEOUT)
    w.late = (await d.ask("late", "erin", timeoutSeconds=LATE))["requestId"]
    await eventually(lambda: any(isinstance(e, QuestionEvent) for e in w.inbox), what="erin shown her question")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=HOW)
async def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    async with running(tmp_path_factory.mktemp(request.param), ASKD_RESULT_TTL_SECONDS=str(TTL)) as d:
        w = World(d, d.daemon.processes[0])
        try:
            await before(d, w)
            shown = next(e for e in w.inbox if isinstance(e, QuestionEvent))
            # Down until a second after erin's deadline: bob's answer, acked
            # before, is then forgotten 2.5 s or more before a retention
            # counted from the restart would forget it.
            w.process = await restart(d.daemon, request.param, down_until=epoch(shown.expires_at) + 1.0)
            yield w
        finally:
            if w.user_client is not None:
                await w.user_client.close()


async def test_pending_questions_come_back_unchanged(world: World) -> None:
    d = world.d
    listening = await world.process.listening()
    # Every question asked before, once: 8 pending (erin's, overdue, ends before the listeners serve), bob's and carol's results.
    assert (listening["pending"], listening["results"]) == (8, 2)
    for body in world.keep:
        r = await d.result(body["sessionId"], body["requestId"])
        assert r.json() == {"requestId": body["requestId"], "sessionId": body["sessionId"], "status": "pending", "expiresAt": body["expiresAt"]}
    listed = (await d.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
    assert listed == world.keep_listed  # same ids, questions, metadata, createdAt, expiresAt, order
    assert [p["createdAt"] for p in listed] == [b["createdAt"] for b in world.keep]
    assert [p["expiresAt"] for p in listed] == [b["expiresAt"] for b in world.keep]
    tab = await d.connect("alice")
    replayed = [f["payload"] for f in await tab.subscribe("*") if f["type"] == "ask_user_questions"]
    assert replayed == world.keep_replayed  # the same payloads, in the same order


async def test_idempotency_keys_replay_and_push_nothing(world: World) -> None:
    d = world.d
    tab = await d.connect("carol")
    await tab.subscribe("*")
    for key, session, status, code in (("k-pending", "idem", "pending", 201), ("k-answered", "idem-2", "answered", 200)):
        r = await d.http.post(
            f"{d.url}/v1/sessions/{session}/questions",
            json={"userId": "carol", "questions": [q("Again?")]},
            headers={**d.agent_headers, "Idempotency-Key": key},
        )
        assert (r.status_code, r.json()["requestId"], r.json()["status"]) == (code, world.idem[key], status), r.text
        assert r.headers.get("Idempotent-Replayed") == "true"
    await tab.quiet()  # nothing new was pushed
    pending = (await d.http.get(f"{d.url}/v1/sessions/idem/questions", headers=d.agent_headers)).json()["pending"]
    assert [p["requestId"] for p in pending] == [world.idem["k-pending"]]


async def test_cancelling_the_root_after_a_restart_cascades(world: World) -> None:
    d = world.d
    tab = await d.connect("dave")
    await tab.subscribe("*")
    r = await d.http.post(f"{d.url}/v1/sessions/root/cancel", headers=d.agent_headers)
    assert r.json() == {"cancelled": 2}
    ended = {(await tab.expect("ask_user_questions_cancelled"))["payload"]["requestId"] for _ in range(2)}
    assert ended == set(world.tree.values())
    for session, rid in world.tree.items():
        result = (await d.result(session, rid)).json()
        assert (result["status"], result["error"]) == ("cancelled", CANCEL_ERROR)


async def test_a_deadline_passed_while_down_ends_as_timeout_at_start(world: World) -> None:
    d, rid = world.d, world.late
    # Ended by the start itself, before any client could reach the daemon.
    await eventually(lambda: any(e.get("requestId") == rid for e in world.process.named("question.timeout")))
    result = (await d.result("late", rid)).json()
    assert result["status"] == "timeout" and result["error"], result  # kept for the retention
    # A tab that subscribes now is not shown it again...
    tab = await d.connect("erin")
    assert await tab.subscribe("*") == []
    # ...and erin's UserClient, which showed it before, rides through the
    # restart and tells its application it ended while the link was down
    # (askd sent its `cancelled` event at start, when no tab was connected).
    ended = await eventually(lambda: [e for e in world.inbox if isinstance(e, CancelledEvent)])
    assert [(e.request_id, e.reason) for e in ended] == [(rid, ENDED_WHILE_AWAY)]
    assert [e.request_id for e in world.inbox if isinstance(e, QuestionEvent)] == [rid]  # shown once


@pytest.mark.parametrize("how", HOW)
async def test_a_tree_still_cascades_when_a_middle_session_kept_nothing(how: str, tmp_path: Path) -> None:
    """root <- middle <- leaf, and middle's only question has ended and been
    forgotten: middle still links leaf to root, before and after a restart."""
    async with running(tmp_path, ASKD_RESULT_TTL_SECONDS="0.3") as d:
        middle = (await d.ask("middle", "dave", parentSessionId="root"))["requestId"]
        leaf = (await d.ask("leaf", "dave", parentSessionId="middle"))["requestId"]
        r = await d.http.delete(f"{d.url}/v1/sessions/middle/questions/{middle}", headers=d.agent_headers)
        assert r.json()["status"] == "cancelled"
        await eventually(lambda: _gone(d, "middle", middle), what="middle's result forgotten")
        await restart(d.daemon, how)
        r = await d.http.post(f"{d.url}/v1/sessions/root/cancel", headers=d.agent_headers)
        assert r.json() == {"cancelled": 1}
        assert (await d.result("leaf", leaf)).json()["status"] == "cancelled"


async def _gone(d: RunningDaemon[Service], session: str, rid: str) -> bool:
    return (await d.result(session, rid)).status_code == 404


async def test_an_unread_result_is_kept_until_its_retention_runs_out(world: World) -> None:
    """Last in the module: it waits for the retention of bob's answer,
    counted from its end, not from the restart."""
    d, done = world.d, world.done
    r = await d.result("done", done["requestId"])
    assert receipted(r.json()) == {"requestId": done["requestId"], "sessionId": "done", "status": "answered", "answers": done["answers"], "answeredBy": "bob", "via": "ws"}
    gone_by = done["acked"] + TTL

    async def forgotten() -> bool:
        r = await d.result("done", done["requestId"])
        if r.status_code == 200:
            assert time.time() < gone_by + 1.5, "kept past its retention"
            return False
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", r.text
        return True

    await eventually(forgotten, timeout=TTL + FRAME_TIMEOUT, every=0.05)
    assert time.time() >= done["sent"] + TTL, "forgotten before its retention ran out"
