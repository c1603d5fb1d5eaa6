"""Spec H across a restart of a real ``askd serve`` on SQLite: a step due
while no daemon ran is taken when it starts, once; a later step is taken
live at its time; groups come back as they were."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import FRAME_TIMEOUT, eventually, q
from tests.system.restart import HOW, epoch, restart, running

# afterSeconds of the two steps. The second must stay ahead of the restart:
# starting `askd serve` again took up to 4 s on a loaded 2-core machine, more
# than 6 s with the suite on four workers beside it, and the step must still
# be in the future when the restarted daemon is read.
FIRST, SECOND = 1.5, 12.0


@pytest.mark.parametrize("how", HOW)
async def test_a_step_due_while_down_is_taken_at_start_once_and_the_next_one_live(how: str, tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        svc = d.daemon
        r = await d.admin("PUT", "/admin/v1/groups/leads", json={"members": ["dave"]})
        assert r.status_code == 200
        steps = [{"afterSeconds": FIRST, "to": ["group:leads"]}, {"afterSeconds": SECOND, "to": ["erin"]}]
        asked = await d.ask("s1", "alice", [q("Deploy?")], escalate=steps, timeoutSeconds=60)
        rid, created = asked["requestId"], epoch(asked["createdAt"])
        assert time.time() < created + FIRST - 0.3, "the machine was too slow to go down before the first step"

        process = await restart(svc, how, down_until=created + FIRST + 0.2)
        assert time.time() < created + SECOND - 1, "the restart took longer than the second step's wait"
        assert (await d.result("s1", rid)).json()["escalations"] == 1
        assert (await d.admin("GET", "/admin/v1/groups")).json() == {"groups": [{"group": "leads", "members": ["dave"]}]}
        dave = await d.connect("dave")
        frames = await dave.subscribe("*")
        assert [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"] == [rid]

        erin = await d.connect("erin")
        await erin.subscribe("*")  # nothing yet: not in the audience before the second step
        frame = await erin.expect("ask_user_questions", timeout=SECOND + FRAME_TIMEOUT)
        assert frame["payload"]["requestId"] == rid and time.time() >= created + SECOND
        assert (await d.result("s1", rid)).json()["escalations"] == 2
        # each step taken once: one log line each, across both processes
        def logged() -> list[int]:
            return sorted(e["step"] for p in svc.processes for e in p.named("question.escalated"))

        await eventually(lambda: logged() == [1, 2], what="each step logged once")
        assert [e["step"] for e in process.named("question.escalated")] == [1, 2]  # both by the restarted one
        assert (await erin.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}
