"""The person who approves, in a real WebSocket tab, and an agent client
whose link can be tampered with: what the integration tests share."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from askd.client import AsyncAgentClient, RetryPolicy
from tests.conftest import FRAME_TIMEOUT, RunningDaemon, WsClient

FAST_RETRY = RetryPolicy(retry_for=10.0, backoff_base=0.02, backoff_cap=0.1)


class Person:
    """A user's open tab: takes each approval pushed to it and decides."""

    def __init__(self, tab: WsClient) -> None:
        self.tab = tab
        self._ids = 0

    @classmethod
    async def open(cls, daemon: RunningDaemon, user: str = "alice") -> Person:
        return cls(await daemon.connect(user))

    async def next_approval(self, timeout: float = FRAME_TIMEOUT) -> dict[str, Any]:
        """The next approval pushed (``sessionId``, ``requestId``, ``action``...), skipping other frames."""
        while True:
            frame = await self.tab.recv(timeout)
            if frame["type"] == "ask_user_questions" and "action" in frame["payload"]:
                return {"sessionId": frame["sessionId"], **frame["payload"]}

    async def _reply(self, frame: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        frame_id = f"p{self._ids}"
        await self.tab.send({**frame, "id": frame_id})
        while True:
            got = await self.tab.recv()
            if got.get("id") == frame_id:
                return got

    async def approve(self, asked: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """``approve`` (``arguments``, ``scope`` as the frame takes them): the reply frame."""
        return await self._reply({"type": "approve", "sessionId": asked["sessionId"], "requestId": asked["requestId"], **extra})

    async def deny(self, asked: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        body = {"type": "decline", "sessionId": asked["sessionId"], "requestId": asked["requestId"]}
        if reason is not None:
            body["reason"] = reason
        return await self._reply(body)


class Tampering(httpx.AsyncBaseTransport):
    """A man in the middle: every result body askd returns with a receipt is
    passed through ``change`` before the client reads it."""

    def __init__(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.change = change

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        try:
            data = json.loads(body)
        except ValueError:
            return httpx.Response(response.status_code, headers=response.headers, content=body)
        if isinstance(data, dict) and data.get("receipt"):
            data = self.change(data)
        return httpx.Response(response.status_code, json=data)

    async def aclose(self) -> None:
        await self.inner.aclose()


def agent_client(daemon: RunningDaemon, transport: httpx.AsyncBaseTransport | None = None) -> AsyncAgentClient:
    """An agent client of the daemon with short polls and retries."""
    return AsyncAgentClient(daemon.url, daemon.token("agent"), retry=FAST_RETRY, poll_seconds=0.5, transport=transport)


def other_arguments(data: dict[str, Any]) -> dict[str, Any]:
    """The result says other arguments were approved than the receipt signs."""
    return {**data, "arguments": {**data.get("arguments", {}), "injected": "rm -rf /"}}


def forged_signature(data: dict[str, Any]) -> dict[str, Any]:
    """The receipt's signature changed in its last characters."""
    head, payload, signature = data["receipt"].split(".")
    forged = ("A" if signature[:1] != "A" else "B") + signature[1:]
    return {**data, "receipt": f"{head}.{payload}.{forged}"}
