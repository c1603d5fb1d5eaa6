"""A daemon restart during the wait still ends in the answer: ``askd serve``
as a real process on the default SQLite store, stopped (SIGTERM or
SIGKILL) and started again on the same ports while ``askd mcp`` waits. The
bridge finds the daemon and mints its token with no flags at all, from
askd.json and the state directory's secret, as on a user's machine."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from askd import state, tokens
from tests.cli.test_subprocess import closed_port
from tests.conftest import FRAME_TIMEOUT, WsClient, q
from tests.mcp.conftest import BridgeFactory
from tests.mcp.test_bridge import text
from tests.test_daemon_process import ASKD, ServeProcess


class Served:
    """``askd serve`` on fixed ports, restartable on the same ones."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.port, self.admin_port = closed_port(), closed_port()
        self.procs: list[ServeProcess] = []

    async def start(self) -> ServeProcess:
        proc = await asyncio.create_subprocess_exec(
            *ASKD, "serve", "--port", str(self.port), "--admin-port", str(self.admin_port),
            env={**os.environ, "ASKD_STATE_DIR": str(self.state_dir), "ASKD_LOG__FORMAT": "json"},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        sp = ServeProcess(proc)
        self.procs.append(sp)
        await sp.listening()
        return sp

    async def tab(self, user: str = "alice") -> tuple[WsClient, list[dict[str, Any]]]:
        """A subscribed tab, and what its subscribe re-pushed."""
        secret = state.read_secret(self.state_dir)
        assert secret is not None
        conn = await websockets.connect(
            f"ws://127.0.0.1:{self.port}/ws", additional_headers={"Authorization": f"Bearer {tokens.issue(secret, 'user', user)}"}
        )
        tab = WsClient(conn)
        return tab, await tab.subscribe("*")


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    s = Served(tmp_path / "state")  # the bridge fixture's ASKD_STATE_DIR too
    yield s
    for sp in s.procs:  # only the processes this test started
        if sp.proc.returncode is None:
            sp.proc.kill()
            await sp.proc.wait()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
async def test_a_daemon_restart_during_the_wait_still_ends_in_the_answer(
    served: Served, bridge: BridgeFactory, stop: signal.Signals
) -> None:
    first = await served.start()
    tab, _ = await served.tab()
    async with bridge("--session", "s-restart") as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Which database?", "PostgreSQL", "SQLite")]}))
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]

        first.proc.send_signal(stop)
        await first.exit_code(FRAME_TIMEOUT)
        await tab.close()
        assert not call.done()  # the call rides through the outage

        await served.start()
        tab, repushed = await served.tab()  # the question is still pending, re-pushed with its requestId
        assert [f["payload"]["requestId"] for f in repushed if f["type"] == "ask_user_questions"] == [rid]
        ack = await tab.answer("s-restart", rid, {"Which database?": "SQLite"})
        assert ack["payload"] == {"accepted": True}
        result = await asyncio.wait_for(call, 20)  # the bridge's backoff is capped at 5 s
        await tab.close()
    assert result.is_error is False
    assert result.structured_content == {
        "requestId": rid,
        "sessionId": "s-restart",
        "status": "answered",
        "answers": {"Which database?": "SQLite"},
    }
    assert text(result) == "Which database? → SQLite"
