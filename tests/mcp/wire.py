"""A host speaking the 2026-07-28 protocol to a real ``askd mcp`` as plain
JSON-RPC lines on stdio: the ``mcp`` package's client resolves a task
itself and has no ``tasks/*`` calls, so the tests of MCP Tasks (protocol
section 22) write the frames themselves and read every one that comes
back."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.mcp.conftest import ASKD, CALL_TIMEOUT

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
FORM: dict[str, Any] = {"elicitation": {"form": {}}}
# A cold interpreter importing askd and the SDK on a loaded 2-core machine:
# the first answer may take this long; later ones CALL_TIMEOUT.
START_TIMEOUT = 60.0


def caps(*, tasks: bool = True, form: bool = False) -> dict[str, Any]:
    """The client capabilities a request declares."""
    out: dict[str, Any] = {}
    if tasks:
        out["extensions"] = {TASKS: {}}
    if form:
        out.update(FORM)
    return out


class Host:
    """One ``askd mcp`` process; ``request`` sends a request with the
    2026-07-28 envelope and returns the whole response (``result`` or
    ``error``); notifications collect in ``notes``."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc, self.log = proc, log
        self.notes: list[dict[str, Any]] = []
        self.stray: list[bytes] = []
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._noted = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.stray.append(line)
                continue
            if "id" in message and ("result" in message or "error" in message):
                future = self._waiting.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message)
            elif "method" in message and "id" not in message:
                self.notes.append(message)
                self._noted.set()
            else:
                self.stray.append(line)

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, declare: dict[str, Any] | None = None
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Write one request; its id and the future of its response."""
        self._next += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": caps() if declare is None else declare,
            "io.modelcontextprotocol/clientInfo": {"name": "test-host", "version": "0"},
        }
        frame = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": {**(params or {}), "_meta": meta}}
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        return self._next, future

    async def request(self, method: str, params: dict[str, Any] | None = None, *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        _, future = self.send(method, params, declare=declare)
        return await asyncio.wait_for(future, CALL_TIMEOUT)

    async def result(self, method: str, params: dict[str, Any] | None = None, *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.request(method, params, declare=declare)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    async def error(self, method: str, params: dict[str, Any] | None = None, *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.request(method, params, declare=declare)
        assert "error" in response, response
        error: dict[str, Any] = response["error"]
        return error

    async def call(self, tool: str, arguments: dict[str, Any], *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.result("tools/call", {"name": tool, "arguments": arguments}, declare=declare)

    async def get(self, task_id: str, *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.result("tasks/get", {"taskId": task_id}, declare=declare)

    async def until(self, task_id: str, status: str, *, declare: dict[str, Any] | None = None) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task has ``status``."""
        deadline = asyncio.get_running_loop().time() + CALL_TIMEOUT
        while True:
            task = await self.get(task_id, declare=declare)
            if task["status"] == status:
                return task
            assert asyncio.get_running_loop().time() < deadline, f"task still {task['status']}, not {status}"
            await asyncio.sleep(0.05)

    async def note(self, check: Any) -> dict[str, Any]:
        """The first notification ``check`` accepts, waiting for it."""
        deadline = asyncio.get_running_loop().time() + CALL_TIMEOUT
        while True:
            for note in self.notes:
                if check(note):
                    return note
            self._noted.clear()
            await asyncio.wait_for(self._noted.wait(), max(0.01, deadline - asyncio.get_running_loop().time()))

    async def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), CALL_TIMEOUT)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()


@asynccontextmanager
async def host(tmp_path: Path, url: str | None, token: str | None, *args: str, name: str = "host") -> AsyncIterator[Host]:
    """``askd mcp --user alice ARGS`` with the agent token in its
    environment; the state directory is the test's. Checked on the way out:
    stdout carried only protocol frames, the log no token."""
    log = tmp_path / f"{name}.log"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "ASKD_STATE_DIR": str(tmp_path / "state")}
    if token is not None:
        env["ASKD_AGENT_TOKEN"] = token
    where = ["--url", url] if url is not None else []
    with log.open("w") as errlog:
        proc = await asyncio.create_subprocess_exec(
            *ASKD, "mcp", "--user", "alice", *where, *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errlog, env=env,
        )
        h = Host(proc, log)
        try:
            _, up = h.send("server/discover")  # the process is up, as a host lists tools first
            assert "result" in await asyncio.wait_for(up, START_TIMEOUT)
            yield h
        finally:
            await h.close()
    assert not h.stray, f"stdout carried something other than the protocol: {h.stray!r}"
    assert token is None or token not in log.read_text()
