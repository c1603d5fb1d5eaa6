"""The person for the LangGraph and Claude Agent SDK tests: ``Person``'s tab
(tests/integrations/person.py) that also answers questions, finds what is
pending from the daemon's listing (an adapter asks several at once), and
counts what askd was asked; and ``Person``'s tampering, for a blocking client."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.conftest import FRAME_TIMEOUT, RunningDaemon, eventually
from tests.integrations.person import Person


class Reviewer(Person):
    def __init__(self, daemon: RunningDaemon, person: Person) -> None:
        super().__init__(person.tab)
        self.daemon = daemon

    @classmethod
    async def open_for(cls, daemon: RunningDaemon, user: str = "alice") -> Reviewer:
        return cls(daemon, await Person.open(daemon, user))

    async def pending(self, count: int = 1, timeout: float = FRAME_TIMEOUT) -> list[dict[str, Any]]:
        """The pending questions and approvals, once there are exactly ``count``
        (oldest first). ``timeout``: longer where a child process must start
        first (importing a framework takes seconds on a loaded machine)."""

        async def listed() -> list[dict[str, Any]] | None:
            items: list[dict[str, Any]] = (await self.daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
            return items if len(items) >= count else None

        items: list[dict[str, Any]] = await eventually(listed, timeout, what=f"{count} pending question(s)")
        assert len(items) == count, items
        return items

    async def answer(self, asked: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
        return await self._reply(
            {"type": "ask_user_questions_result", "sessionId": asked["sessionId"], "requestId": asked["requestId"],
             "answers": answers}
        )

    async def asked_count(self) -> int:
        """How many questions askd was asked in all (admin ``stats``)."""
        return int((await self.daemon.admin("GET", "/admin/v1/stats")).json()["asked"])


class BlockingTampering(httpx.BaseTransport):
    """``Tampering`` for a blocking ``AgentClient``: every result body with a
    receipt passes through ``change`` before the client reads it."""

    def __init__(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.inner = httpx.HTTPTransport()
        self.change = change

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        body = response.read()
        try:
            data = json.loads(body)
        except ValueError:
            return httpx.Response(response.status_code, headers=response.headers, content=body)
        if isinstance(data, dict) and data.get("receipt"):
            data = self.change(data)
        return httpx.Response(response.status_code, json=data)

    def close(self) -> None:
        self.inner.close()

