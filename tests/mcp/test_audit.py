"""What the audit trail records of ``askd mcp``: its asks came through it
(``via: mcp``, sent as the ``Askd-Via`` header), and so did an answer given
in the host; a plain agent's ask stays ``via: agent``."""

from __future__ import annotations

import asyncio
import json

from tests.conftest import RunningDaemon, q
from tests.mcp.conftest import BridgeFactory
from tests.mcp.test_bridge import S, tab_for


async def test_an_ask_through_askd_mcp_is_recorded_via_mcp(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent", "claude")) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy?")]}))
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        await tab.answer(S, rid, {"Deploy?": "yes"})
        await asyncio.wait_for(call, 10)
    await daemon.ask("plain", "alice")
    r = await daemon.admin("GET", "/admin/v1/audit")
    records = [json.loads(line) for line in r.text.splitlines()]
    assert [(r["event"], r["sessionId"], r["by"], r["via"]) for r in records] == [
        ("asked", S, "claude", "mcp"), ("answered", S, "alice", "ws"), ("asked", "plain", None, "agent")
    ]
