"""A daemon restart during the wait still ends in the answer: ``askd serve``
as a real process on the default SQLite store, stopped (SIGTERM or
SIGKILL) and started again on the same ports while ``askd mcp`` waits. The
bridge finds the daemon and mints its token with no flags at all, from
askd.json and the state directory's secret, as on a user's machine."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from askd import state, tokens
from tests.support.askd_process import Service
from tests.conftest import FRAME_TIMEOUT, WsClient, q
from tests.mcp.conftest import BridgeFactory
from tests.mcp.test_bridge import text
from tests.receipts.independent import receipted


async def subscribed_tab(served: Service, user: str = "alice") -> tuple[WsClient, list[dict[str, Any]]]:
    """A subscribed tab, and what its subscribe re-pushed."""
    secret = state.read_secret(served.state_dir)
    assert secret is not None
    conn = await websockets.connect(
        f"ws://127.0.0.1:{served.port}/ws", additional_headers={"Authorization": f"Bearer {tokens.issue(secret, 'user', user)}"}
    )
    tab = WsClient(conn)
    return tab, await tab.subscribe("*")


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Service]:
    s = Service(tmp_path / "state")  # the bridge fixture's ASKD_STATE_DIR too
    yield s
    await s.close()  # only the processes this test started


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
async def test_a_daemon_restart_during_the_wait_still_ends_in_the_answer(
    served: Service, bridge: BridgeFactory, stop: signal.Signals
) -> None:
    first = await served.start()
    tab, _ = await subscribed_tab(served)
    async with bridge("--session", "s-restart") as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Which database?", "PostgreSQL", "SQLite")]}))
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]

        first.proc.send_signal(stop)
        await first.exit_code(FRAME_TIMEOUT)
        await tab.close()
        assert not call.done()  # the call rides through the outage

        await served.start()
        tab, repushed = await subscribed_tab(served)  # the question is still pending, re-pushed with its requestId
        assert [f["payload"]["requestId"] for f in repushed if f["type"] == "ask_user_questions"] == [rid]
        ack = await tab.answer("s-restart", rid, {"Which database?": "SQLite"})
        assert ack["payload"] == {"accepted": True}
        result = await asyncio.wait_for(call, 20)  # the bridge's backoff is capped at 5 s
        await tab.close()
    assert result.is_error is False
    assert receipted(result.structured_content) == {
        "requestId": rid,
        "sessionId": "s-restart",
        "status": "answered",
        "answers": {"Which database?": "SQLite"},
        "answeredBy": "alice",
        "via": "ws",
    }
    assert text(result) == "Which database? → SQLite"
