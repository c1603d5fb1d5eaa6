"""Real ``askd serve`` processes on one Redis, for the cluster tests where a
node (or Redis) must die, and for the cluster soak: each node its own state
directory, ``ASKD_NODE_ID`` and ports, all the same secret and store."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx

from tests.test_daemon_process import ASKD, ServeProcess

STOP_TIMEOUT = 15.0  # a clean stop takes its 2 s grace, plus a busy machine


class Node:
    """One ``askd serve --store redis://...`` process. ``scheme``, ``port``
    and ``admin_port`` are what ``tests.conftest.RunningDaemon`` reads of a
    daemon, so ``RunningDaemon(node, http)`` gives a node its helpers."""

    scheme = "http"

    def __init__(self, node_id: str, store: str, state_dir: Path, secret: str, *args: str, **settings: Any) -> None:
        self.id, self.args = node_id, args
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
        self.env.update(
            ASKD_NODE_ID=node_id,
            ASKD_STORE=store,
            ASKD_STATE_DIR=str(state_dir),
            ASKD_AUTH__SECRET=secret,
            ASKD_LOG__FORMAT="json",
            **{f"ASKD_{k.upper()}": str(v) for k, v in settings.items()},
        )
        self.port = self.admin_port = 0
        self.proc: ServeProcess | None = None

    async def start(self) -> Node:
        proc = await asyncio.create_subprocess_exec(
            *ASKD, "serve", "--host", "127.0.0.1", "--admin-host", "127.0.0.1", "--port", "0", "--admin-port", "0",
            *self.args,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        self.proc = ServeProcess(proc)
        listening = await self.proc.listening()
        assert listening["node"] == self.id and listening["store"] == "redis", listening
        self.port, self.admin_port = listening["port"], listening["admin_port"]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.proc.returncode is None

    async def kill(self) -> None:
        """``kill -9``: no stop, no goodbye to anyone."""
        assert self.proc is not None
        if self.proc.proc.returncode is None:
            self.proc.proc.kill()
        await self.proc.exit_code(STOP_TIMEOUT)

    async def stop(self) -> int:
        """SIGTERM, the clean stop; returns the exit code."""
        assert self.proc is not None
        if self.proc.proc.returncode is None:
            self.proc.proc.terminate()
        return await self.proc.exit_code(STOP_TIMEOUT)

    def error_lines(self) -> list[str]:
        """Lines logged at error level or above, and lines that are not
        askd's JSON at all (a traceback, a crash)."""
        assert self.proc is not None
        out = []
        for line in self.proc.lines:
            try:
                event = json.loads(line)
            except ValueError:
                out.append(line)
                continue
            if event.get("level") in ("error", "critical"):
                out.append(line)
        return out


class Failover(httpx.AsyncBaseTransport):
    """An agent's way to several nodes: every request goes to the current
    node; when one fails on the wire (refused, reset, cut mid-response) the
    next request goes to the next node. The agent client's own retry then
    carries the call over (the way a client behind DNS round-robin or a
    load balancer without health checks does). ``log`` records every
    request: (node URL, method, path, status or the error's name)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls, self.at = [httpx.URL(u) for u in urls], 0
        self.log: list[tuple[str, str, str, int | str]] = []
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        node = self.urls[self.at]
        request.url = request.url.copy_with(scheme=node.scheme, host=node.host, port=node.port)
        where = str(node).rstrip("/")
        try:
            response = await self._inner.handle_async_request(request)
            await response.aread()  # a cut in the body counts as this node failing, too
        except httpx.TransportError as err:
            self.log.append((where, request.method, request.url.path, type(err).__name__))
            self.at = (self.at + 1) % len(self.urls)
            raise
        self.log.append((where, request.method, request.url.path, response.status_code))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
