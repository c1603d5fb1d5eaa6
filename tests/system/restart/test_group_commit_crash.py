"""``kill -9`` in the middle of group commits: a real ``askd serve`` on the
SQLite store takes a burst of asks and answers (many batches, each one
transaction) and is killed while they are in flight. A ledger keeps what it
acknowledged; after the restart every acknowledged ask is there, every
accepted answer is its result, and no Idempotency-Key names two questions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import RunningDaemon, eventually
from tests.system.restart import running

BURST = 300
ANSWERED = 40


async def test_a_kill_in_the_middle_of_batches_loses_nothing_acknowledged(tmp_path: Path) -> None:
    async with running(tmp_path) as d:
        first = [await d.ask(f"s{i % 4}", "alice", headers={"Idempotency-Key": f"a{i}"}) for i in range(ANSWERED)]
        asked: dict[str, tuple[str, str]] = {}  # Idempotency-Key -> (session, requestId), acknowledged
        answered: dict[str, str] = {}  # requestId -> the answer acknowledged

        async def ask(i: int) -> None:
            key, session = f"b{i}", f"s{i % 4}"
            try:
                r = await post(d, f"/v1/sessions/{session}/questions", {"userId": "alice", "questions": [{"question": "Which database?"}]}, key)
            except httpx.TransportError:
                return  # killed before the reply: not acknowledged
            if r.status_code == 201:
                asked[key] = (session, r.json()["requestId"])

        async def answer(req: dict[str, Any], n: int) -> None:
            path = f"/admin/v1/sessions/{req['sessionId']}/questions/{req['requestId']}/answer"
            try:
                r = await d.http.post(f"{d.admin_url}{path}", json={"answers": {"Which database?": f"v{n}"}}, headers=d.admin_headers)
            except httpx.TransportError:
                return
            if r.status_code == 200 and r.json() == {"accepted": True}:
                answered[req["requestId"]] = f"v{n}"

        burst = [asyncio.ensure_future(ask(i)) for i in range(BURST)]
        burst += [asyncio.ensure_future(answer(req, n)) for n, req in enumerate(first)]
        await eventually(lambda: len(asked) >= 20 or all(t.done() for t in burst), what="acknowledgements")
        await d.daemon.kill()
        await asyncio.gather(*burst)
        assert len(asked) < BURST, "the kill came after the burst: nothing was in flight"

        await d.daemon.start()
        for key, (session, rid) in asked.items():
            r = await d.result(session, rid)
            assert r.status_code == 200, (key, r.text)
            again = await d.ask(session, "alice", headers={"Idempotency-Key": key})
            assert again["requestId"] == rid, key  # the one question the key names
        for rid, value in answered.items():
            req = next(q for q in first if q["requestId"] == rid)
            result = (await d.result(req["sessionId"], rid)).json()
            assert result["status"] == "answered" and result["answers"] == {"Which database?": value}, result


async def post(d: RunningDaemon[Any], path: str, body: dict[str, Any], key: str) -> httpx.Response:
    return await d.http.post(f"{d.url}{path}", json=body, headers={**d.agent_headers, "Idempotency-Key": key})
