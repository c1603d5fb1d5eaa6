"""A real webhook receiver for tests: Tornado on 127.0.0.1, a free port, in
the test's event loop. It answers each POST as its script says (a status
code, or ``HANG`` to never answer) and records what arrived."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from askd.channels.webhook import request as webhook

HANG = "hang"


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body)

    def signed_with(self, secret: str) -> bool:
        """The receiver's check, as docs/notify.md shows it: the Standard
        Webhooks signature, verified by the ``standardwebhooks`` package."""
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("webhook-")}
        try:
            Webhook(webhook.standard_key(secret)).verify(self.body, headers)
        except WebhookVerificationError:
            return False
        return True

    @property
    def header_names(self) -> set[str]:
        return {k.lower() for k in self.headers}


@dataclass
class Receiver:
    port: int = 0
    script: list[int | str] = field(default_factory=list)  # consumed one per POST; then 200
    then: int | str = 200
    got: list[Delivery] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/T000/B000/s3cr3tpath"

    async def wait_for(self, n: int, timeout: float = 5.0) -> list[Delivery]:
        """Until ``n`` deliveries arrived; returns them all."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.got) >= n), timeout)
        return self.got

    async def quiet(self, window: float, expect: int) -> None:
        """Assert the count stays at ``expect`` for ``window`` seconds."""
        await asyncio.sleep(window)
        assert len(self.got) == expect, [d.body for d in self.got]


class _Hook(tornado.web.RequestHandler):
    def initialize(self, receiver: Receiver) -> None:
        self.receiver = receiver

    async def post(self, _: str) -> None:
        r = self.receiver
        loop = asyncio.get_running_loop()
        async with r.arrived:
            r.got.append(Delivery(self.request.path, dict(self.request.headers), self.request.body, loop.time()))
            r.arrived.notify_all()
        action = r.script.pop(0) if r.script else r.then
        if action == HANG:
            await r.release.wait()
            return
        assert isinstance(action, int)
        self.set_status(action)
        self.finish("ok" if action < 300 else f"error {action}")


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    r = Receiver()
    app = tornado.web.Application([(r"(/.*)", _Hook, {"receiver": r})])
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server = tornado.httpserver.HTTPServer(app)
    server.add_sockets(sockets)
    r.port = sockets[0].getsockname()[1]
    try:
        yield r
    finally:
        r.release.set()
        server.stop()
        await server.close_all_connections()
