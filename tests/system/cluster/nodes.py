"""Real ``askd serve`` processes on one Redis, for the cluster tests where a
node (or Redis) must die: each node its own state directory, ``ASKD_NODE_ID``
and ports, all the same secret and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.askd_process import Service


class Node(Service):
    """One ``askd serve --store redis://...``, a ``Service`` (its ports kept
    across restarts). ``scheme``, ``port`` and ``admin_port`` are what
    ``tests.conftest.RunningDaemon`` reads of a daemon, so
    ``RunningDaemon(node, http)`` gives a node its helpers."""

    def __init__(self, node_id: str, store: str, state_dir: Path, secret: str, *args: str, **settings: Any) -> None:
        env = {"ASKD_NODE_ID": node_id, "ASKD_STORE": store, "ASKD_AUTH__SECRET": secret}
        env.update({f"ASKD_{k.upper()}": str(v) for k, v in settings.items()})
        super().__init__(state_dir, *args, env=env)
        self.id = node_id

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.proc.returncode is None

    def error_lines(self) -> list[str]:
        """What every process of this node logged at error level, or not as askd's JSON."""
        return [line for p in self.processes for line in p.error_lines()]


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
