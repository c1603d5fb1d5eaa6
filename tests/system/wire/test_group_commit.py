"""Group commit against a real daemon on each store: asks that arrive in
one loop iteration are one store step, and what each ask reserves in the
core keeps them apart (one last slot, one Idempotency-Key: one winner)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from askd.core import AskInput, TooManyPending
from askd.core.changes import Change
from tests.conftest import RunningDaemon

QS = [{"question": "Slot?"}]
LAST_SLOT = {"limits": {"max_pending_per_session": 3}}


def node_a(daemon: RunningDaemon[Any]) -> str:
    """Every request to one node (on Redis, the other node's copy of the
    caps may lag: the caps are each node's)."""
    return f"http://127.0.0.1:{daemon.daemon.port}"


async def post_ask(daemon: RunningDaemon[Any], session: str, key: str | None = None) -> httpx.Response:
    headers = {**daemon.agent_headers, **({"Idempotency-Key": key} if key else {})}
    body = {"userId": "alice", "questions": QS}
    return await daemon.http.post(f"{node_a(daemon)}/v1/sessions/{session}/questions", json=body, headers=headers)


def count_steps(daemon: RunningDaemon[Any]) -> list[int]:
    """The size of each store step from now on."""
    store = daemon.daemon.hub.store
    commit, steps = store.commit, []

    async def counted(changes: Sequence[Change]) -> list[Change]:
        steps.append(len(changes))
        return await commit(changes)

    store.commit = counted  # type: ignore[method-assign]
    return steps


@pytest.mark.parametrize("settings_overrides", [LAST_SLOT])
async def test_asks_in_one_batch_take_the_last_slot_once(daemon: RunningDaemon[Any]) -> None:
    hub = daemon.daemon.hub
    for _ in range(2):
        await hub.ask(AskInput("full", "alice", QS))
    steps = count_steps(daemon)
    racing = [hub.ask(AskInput("full", "alice", QS)) for _ in range(5)] + [hub.ask(AskInput(f"other{i}", "alice", QS)) for i in range(5)]
    results = await asyncio.gather(*racing, return_exceptions=True)
    last_slot, others = results[:5], results[5:]
    assert sum(not isinstance(r, BaseException) for r in last_slot) == 1, last_slot
    assert all(isinstance(r, TooManyPending) for r in last_slot if isinstance(r, BaseException)), last_slot
    assert not any(isinstance(r, BaseException) for r in others), others
    assert steps == [6], "the ten asks were not one store step"
    assert len(hub.registry.pending(session_id="full")) == 3


async def test_asks_in_one_batch_with_one_key_make_one_question(daemon: RunningDaemon[Any]) -> None:
    hub = daemon.daemon.hub
    results = await asyncio.gather(*(hub.ask(AskInput("k", "alice", QS, idempotency_key="once")) for _ in range(5)))
    assert len({req.request_id for req, _ in results}) == 1, results
    assert sorted(created for _, created in results) == [False] * 4 + [True]
    assert len(hub.registry.pending(session_id="k")) == 1


@pytest.mark.parametrize("settings_overrides", [LAST_SLOT])
async def test_asks_racing_over_http_for_the_last_slot_one_wins(daemon: RunningDaemon[Any]) -> None:
    for _ in range(2):
        await daemon.ask("full")
    got = await asyncio.gather(*(post_ask(daemon, "full") for _ in range(10)))
    assert sorted(r.status_code for r in got) == [201] + [429] * 9, [r.text for r in got]
    assert all(r.json()["error"]["code"] == "too_many_pending" for r in got if r.status_code == 429)
    listed = await daemon.http.get(f"{node_a(daemon)}/v1/sessions/full/questions", headers=daemon.agent_headers)
    assert len(listed.json()["pending"]) == 3


async def test_asks_racing_over_http_with_one_key_make_one_question(daemon: RunningDaemon[Any]) -> None:
    got = await asyncio.gather(*(post_ask(daemon, "k", key="once") for _ in range(10)))
    assert {r.status_code for r in got} == {201}, [r.text for r in got]
    assert len({r.json()["requestId"] for r in got}) == 1
    assert sum(r.headers.get("Idempotent-Replayed") != "true" for r in got) == 1
