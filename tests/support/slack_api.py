"""A local fake of Slack's Web API for tests: Tornado on 127.0.0.1, a free
port, in the test's event loop, driven by askd through Slack's real SDK.

``chat.postMessage`` and ``chat.update`` answer as Slack does
(``{"ok": true, "channel": ..., "ts": ...}``; a user id as the channel is
that user's direct message, ``D`` + the id); each call is recorded. A
script makes the next calls fail: ``(429, seconds)`` is a rate limit with
``Retry-After``, a string is ``{"ok": false, "error": it}``, an int another
HTTP status, ``(SLOW, seconds)`` a call taken late, ``HANG`` one never
answered (recorded as it arrives)."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web

TOKEN = "xoxb-test-0000-secret"
SLOW = "slow"  # ("slow", seconds) in a script: the call is taken, its answer comes that much later
HANG = "hang"  # in a script: the call is never taken nor answered (until the fake stops)


@dataclass
class ApiCall:
    method: str
    args: dict[str, Any]
    auth: str
    at: float
    answered: dict[str, Any] | None = None  # what the fake answered (None: a failure)

    @property
    def text(self) -> str:
        """Every text of the message: its ``text`` and its blocks' texts."""
        blocks = self.args.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        parts = [str(self.args.get("text", ""))]
        for b in blocks:
            if isinstance(b.get("text"), dict):
                parts.append(b["text"]["text"])
        return "\n".join(parts)

    @property
    def blocks(self) -> list[dict[str, Any]]:
        blocks = self.args.get("blocks") or []
        return json.loads(blocks) if isinstance(blocks, str) else list(blocks)

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [e for b in self.blocks if b["type"] == "actions" for e in b["elements"]]


@dataclass
class FakeSlack:
    port: int = 0
    script: list[Any] = field(default_factory=list)  # consumed one per call; then ok
    calls: list[ApiCall] = field(default_factory=list)  # every call, failed ones too
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(1))
    # Where each message is: (channel, ts) -> the last args it was posted or edited with.
    messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def ok(self, method: str) -> list[ApiCall]:
        """The calls of ``method`` Slack took."""
        return [c for c in self.calls if c.method == method and c.answered is not None]

    @property
    def posts(self) -> list[ApiCall]:
        return self.ok("chat.postMessage")

    @property
    def updates(self) -> list[ApiCall]:
        return self.ok("chat.update")

    async def wait_for(self, method: str, n: int, timeout: float = 5.0) -> list[ApiCall]:
        """Until ``n`` calls of ``method`` were taken; returns them."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.ok(method)) >= n), timeout)
        return self.ok(method)

    async def quiet(self, window: float, method: str, expect: int) -> None:
        """Assert that ``method``'s count stays at ``expect`` for ``window`` seconds."""
        await asyncio.sleep(window)
        assert len(self.ok(method)) == expect, [c.args for c in self.ok(method)]

    def answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "chat.postMessage":
            channel = str(args["channel"])
            where = "D" + channel[1:] if channel[:1] in ("U", "W") else channel
            ts = f"1700000000.{next(self._ts):06d}"
            self.messages[(where, ts)] = args
            return {"ok": True, "channel": where, "ts": ts, "message": {"text": args.get("text")}}
        if method == "chat.update":
            key = (str(args["channel"]), str(args["ts"]))
            if key not in self.messages:
                return {"ok": False, "error": "message_not_found"}
            self.messages[key] = args
            return {"ok": True, "channel": key[0], "ts": key[1], "text": args.get("text")}
        return {"ok": False, "error": "unknown_method"}


class _Method(tornado.web.RequestHandler):
    def initialize(self, fake: FakeSlack) -> None:
        self.fake = fake

    async def post(self, method: str) -> None:
        f = self.fake
        kind = self.request.headers.get("Content-Type", "")
        body = self.request.body.decode()
        args = json.loads(body) if "json" in kind else dict(parse_qsl(body))
        call = ApiCall(method, args, self.request.headers.get("Authorization", ""), asyncio.get_running_loop().time())
        action = f.script.pop(0) if f.script else None
        if action == HANG:
            async with f.arrived:
                f.calls.append(call)
                f.arrived.notify_all()
            await f.release.wait()
            self.set_status(503)
            return
        if isinstance(action, tuple) and action[0] == SLOW:  # answers as usual, later
            await asyncio.sleep(action[1])
            action = None
        self.set_header("Content-Type", "application/json; charset=utf-8")
        if call.auth != f"Bearer {TOKEN}":
            self.finish({"ok": False, "error": "invalid_auth"})
        elif action is None:
            call.answered = f.answer(method, args)
            if not call.answered["ok"]:
                call.answered = None
                self.finish(f.answer(method, args))
            else:
                self.finish(call.answered)
        elif isinstance(action, tuple):  # (429, Retry-After seconds)
            status, seconds = action
            self.set_status(status)
            self.set_header("Retry-After", str(seconds))
            self.finish({"ok": False, "error": "ratelimited"})
        elif isinstance(action, int):
            self.set_status(action)
            self.finish({"ok": False, "error": f"http_{action}"})
        else:
            self.finish({"ok": False, "error": str(action)})
        async with f.arrived:
            f.calls.append(call)
            f.arrived.notify_all()


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    app = tornado.web.Application([(r"/api/([A-Za-z.]+)", _Method, {"fake": fake})])
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server = tornado.httpserver.HTTPServer(app)
    server.add_sockets(sockets)
    fake.port = sockets[0].getsockname()[1]
    try:
        yield fake
    finally:
        fake.release.set()
        server.stop()
        await server.close_all_connections()


def slack_settings(fake: FakeSlack, channel: str | None = "C0ASKD", **more: Any) -> dict[str, Any]:
    """The ``notify`` section of a daemon that posts to ``fake``."""
    return {
        "slack_bot_token": TOKEN,
        "slack_api_url": fake.url,
        **({"slack_channel": channel} if channel else {}),
        "timeout_seconds": 2,
        **more,
    }
