"""``askd mcp`` as a host runs it: a real subprocess on stdio, driven by the
``mcp`` package's own client (``stdio_client`` + ``ClientSession``).

Every bridge is checked on the way out: each stdout line was a protocol
message (the client reports anything else to ``message_handler``), and no
token reached its log on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ElicitationFnT

ASKD = [sys.executable, "-m", "askd.cli.main"]
PROGRESS_SECONDS = 0.2  # the bridge's progress interval in tests (15 s is the spec's floor)
CALL_TIMEOUT = 20.0  # a cold interpreter on a busy 2-core machine


class Bridge:
    """One ``askd mcp`` process and the client session talking to it."""

    def __init__(self, session: ClientSession, log: Path) -> None:
        self.session = session
        self.log = log
        self.stray: list[Any] = []  # anything on stdout that was not a protocol message

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Any:
        return await self.session.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT, **kw)

    def log_text(self) -> str:
        return self.log.read_text()


BridgeFactory = Callable[..., AbstractAsyncContextManager[Bridge]]


@pytest.fixture
def bridge(tmp_path: Path) -> BridgeFactory:
    """``async with bridge("--url", U, token=T, ...)`` runs ``askd mcp --user
    alice ARGS``; ``token`` goes in ``ASKD_AGENT_TOKEN`` (never on the
    command line), ``env`` adds variables, ``elicitation`` is the host's
    elicitation callback (declaring form elicitation). The state directory
    is the test's, so discovery finds the test daemon's askd.json."""
    count = 0

    @asynccontextmanager
    async def start(
        *args: str,
        token: str | None = None,
        env: dict[str, str] | None = None,
        user: str = "alice",
        elicitation: ElicitationFnT | None = None,
    ) -> AsyncIterator[Bridge]:
        nonlocal count
        count += 1
        log = tmp_path / f"bridge-{count}.log"
        child_env = {"ASKD_STATE_DIR": str(tmp_path / "state"), **(env or {})}
        if token is not None:
            child_env["ASKD_AGENT_TOKEN"] = token
        params = StdioServerParameters(
            command=ASKD[0],
            args=[*ASKD[1:], "mcp", "--user", user, "--progress-seconds", str(PROGRESS_SECONDS), *args],
            env=child_env,
        )
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                holder: list[Bridge] = []

                async def on_message(message: Any) -> None:
                    if isinstance(message, Exception):
                        holder[0].stray.append(message)

                async with ClientSession(read, write, message_handler=on_message, elicitation_callback=elicitation) as session:
                    b = Bridge(session, log)
                    holder.append(b)
                    await session.initialize()
                    yield b
        assert not b.stray, f"stdout carried something other than the protocol: {b.stray!r}"
        if token is not None:
            assert token not in b.log_text()

    return start
