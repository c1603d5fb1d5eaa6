"""``askd serve`` as a real child process, for the tests that need one: its
JSON log collected, and (``Service``) one daemon on fixed ports and one
state directory that is stopped, killed and started again, so that clients
find it where they left it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from askd import state

ASKD = [sys.executable, "-m", "askd.cli.main"]
START_TIMEOUT = 20.0  # a cold interpreter on a busy 2-core machine
STOP_TIMEOUT = 15.0  # a clean stop takes at most its 2 s grace, plus a busy machine


class ServeProcess:
    """``askd serve`` in a child process, its JSON log lines collected."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.events: list[dict[str, Any]] = []
        self._listening: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            line = raw.decode()
            self.lines.append(line)
            try:
                event = json.loads(line)
            except ValueError:
                continue
            self.events.append(event)
            if event.get("event") == "listening" and not self._listening.done():
                self._listening.set_result(event)
        if not self._listening.done():
            self._listening.set_exception(AssertionError("askd exited before listening:\n" + "".join(self.lines)))
            self._listening.exception()  # raised to whoever awaits listening(); never logged as unretrieved

    async def listening(self) -> dict[str, Any]:
        return await asyncio.wait_for(asyncio.shield(self._listening), START_TIMEOUT)

    async def exit_code(self, timeout: float) -> int:
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader
        return code

    def log_text(self) -> str:
        return "".join(self.lines)

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event]

    def error_lines(self) -> list[str]:
        """Lines logged at error level or above, and lines that are not our
        JSON at all (a traceback, a crash)."""
        out = []
        for line in self.lines:
            try:
                event = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            if event.get("level") in ("error", "critical"):
                out.append(line)
        return out

    async def kill(self) -> None:
        """SIGKILL (if it still runs) and reap it."""
        if self.proc.returncode is None:
            self.proc.kill()
        await self.exit_code(STOP_TIMEOUT)


async def spawn(*args: str, env: dict[str, str] | None = None) -> ServeProcess:
    """Start ``askd serve ARGS`` with a JSON log on stderr (``env``: the
    whole environment; default this process's)."""
    proc = await asyncio.create_subprocess_exec(
        *ASKD, "serve", *args,
        env={**(os.environ if env is None else env), "ASKD_LOG__FORMAT": "json"},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    return ServeProcess(proc)


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 right now (held together while
    picked, so they differ)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Service:
    """One askd across restarts: the same ports, state directory, arguments
    and settings (``env``: ``ASKD_*`` variables; none is inherited) for every
    process it starts."""

    def __init__(self, state_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.state_dir = state_dir
        self.args = args
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
        self.env.update(env or {}, ASKD_STATE_DIR=str(state_dir))
        self.port, self.admin_port = free_ports(2)
        self.scheme = "http"
        self.proc: ServeProcess | None = None
        self.processes: list[ServeProcess] = []  # every one started, oldest first

    async def start(self) -> ServeProcess:
        assert self.proc is None or self.proc.proc.returncode is not None, "askd is already running"
        self.proc = await spawn(
            "--host", "127.0.0.1", "--admin-host", "127.0.0.1",
            "--port", str(self.port), "--admin-port", str(self.admin_port), *self.args,
            env=self.env,
        )
        self.processes.append(self.proc)
        await self._announced(self.proc)
        return self.proc

    async def _announced(self, sp: ServeProcess) -> None:
        """Wait until ``askd.json`` names this process: it is written once
        both listeners are bound, whatever the log level (a killed
        predecessor's file names another pid)."""
        deadline = time.monotonic() + START_TIMEOUT
        while (state.read_runtime(self.state_dir) or {}).get("pid") != sp.proc.pid:
            if sp.proc.returncode is not None or time.monotonic() > deadline:
                await sp.kill()
                raise AssertionError("askd did not start:\n" + sp.log_text())
            await asyncio.sleep(0.02)

    async def kill(self) -> None:
        """``kill -9``: no stop, no goodbye to anyone."""
        assert self.proc is not None
        await self.proc.kill()

    async def stop(self) -> int:
        """SIGTERM, the clean stop; returns the exit code."""
        assert self.proc is not None
        self.proc.proc.send_signal(signal.SIGTERM)
        return await self.proc.exit_code(STOP_TIMEOUT)

    async def close(self) -> None:
        """Kill whatever this service still runs (a test's teardown)."""
        for p in self.processes:
            await p.kill()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"
