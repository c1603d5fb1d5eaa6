"""Shared fixtures: a real daemon on port 0 (in this test's event loop, on
real sockets), tokens for every role, and small WebSocket/HTTP helpers."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import httpx
import pytest
import structlog
import websockets

from askd import tokens
from askd.config import load_settings
from askd.server import logs
from askd.server.app import Daemon
from tests.support import profiles  # noqa: F401  registers Hypothesis profiles before --hypothesis-profile applies

SECRET = "test-secret-0123456789abcdef-0123456789"
# How long a test waits for a frame that must come; a frame that must NOT
# come is checked with the much shorter QUIET window. It only runs out when
# a test fails, so it is generous: with the suite on four workers on two
# shared cores, a child `askd` took more than 5 s to start and answer.
FRAME_TIMEOUT = 10.0
QUIET = 0.2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (builds, soaks, the bench smoke) first, the rest
    in their order: with workers (``make test``) the longest files start at
    once instead of ending the run on one worker while the others idle."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("ASKD_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ASKD_STATE_DIR", str(tmp_path / "state"))


class WsClient:
    """A user's tab: a real WebSocket with JSON helpers."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def send(self, obj: Any) -> None:
        await self.conn.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    async def recv(self, timeout: float = FRAME_TIMEOUT) -> dict[str, Any]:
        return json.loads(await asyncio.wait_for(self.conn.recv(), timeout))

    async def expect(self, type_: str, timeout: float = FRAME_TIMEOUT) -> dict[str, Any]:
        frame = await self.recv(timeout)
        assert frame["type"] == type_, frame
        return frame

    async def quiet(self, window: float = QUIET) -> None:
        """Assert nothing arrives within ``window`` seconds."""
        try:
            frame = await asyncio.wait_for(self.conn.recv(), window)
        except asyncio.TimeoutError:
            return
        raise AssertionError(f"unexpected frame {frame!r}")

    async def subscribe(self, session_id: str) -> list[dict[str, Any]]:
        """Subscribe with an id; return every frame up to the closing ack."""
        await self.send({"type": "subscribe", "sessionId": session_id, "id": "sub"})
        frames = []
        while True:
            frame = await self.recv()
            if frame["type"] == "ack" and frame.get("id") == "sub":
                return frames
            frames.append(frame)

    async def answer(self, session_id: str, request_id: str, answers: dict[str, Any], id_: Any = "ans") -> dict[str, Any]:
        await self.send(
            {"type": "ask_user_questions_result", "sessionId": session_id, "requestId": request_id, "answers": answers, "id": id_}
        )
        return await self.recv()

    async def close(self) -> None:
        await self.conn.close()

    async def closed(self, timeout: float = FRAME_TIMEOUT) -> int | None:
        """Wait for the connection to end, skipping frames; return the close
        code the server sent, or None when it dropped TCP without one."""
        async def drain() -> int | None:
            try:
                while True:
                    await self.conn.recv()
            except websockets.ConnectionClosed as err:
                return err.rcvd.code if err.rcvd is not None else None

        return await asyncio.wait_for(drain(), timeout)

    async def works(self) -> None:
        """Assert the connection still answers a ping."""
        await self.send({"type": "ping", "id": "alive"})
        assert await self.recv() == {"type": "pong", "id": "alive"}


class Listening(Protocol):
    """Where an askd listens: an in-process ``Daemon`` or a ``Service``
    running ``askd serve`` (tests/support/askd_process.py) with ``ASKD_AUTH__SECRET``
    set to ``SECRET``."""

    scheme: str
    port: int
    admin_port: int


D = TypeVar("D", bound=Listening)


@dataclass
class RunningDaemon(Generic[D]):
    daemon: D
    http: httpx.AsyncClient
    clients: list[WsClient] = field(default_factory=list)
    ssl: ssl.SSLContext | None = None  # trusts the test CA when the daemon serves TLS

    @property
    def url(self) -> str:
        return f"{self.daemon.scheme}://127.0.0.1:{self.daemon.port}"

    @property
    def admin_url(self) -> str:
        return f"{self.daemon.scheme}://127.0.0.1:{self.daemon.admin_port}"

    @property
    def ws_url(self) -> str:
        return f"{'wss' if self.ssl else 'ws'}://127.0.0.1:{self.daemon.port}/ws"

    def token(self, role: str, sub: str | None = None, ttl: float | None = None) -> str:
        return tokens.issue(SECRET, role, sub, ttl)  # type: ignore[arg-type]

    @property
    def agent_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token('agent')}"}

    @property
    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token('admin')}"}

    async def connect(self, user: str, **kw: Any) -> WsClient:
        if self.ssl is not None:
            kw.setdefault("ssl", self.ssl)
        conn = await websockets.connect(
            self.ws_url, additional_headers={"Authorization": f"Bearer {self.token('user', user)}"}, **kw
        )
        client = WsClient(conn)
        self.clients.append(client)
        return client

    async def ask(
        self,
        session: str,
        user: str = "alice",
        questions: list[dict[str, Any]] | None = None,
        *,
        expect: int = 201,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        **body: Any,
    ) -> dict[str, Any]:
        payload = {"userId": user, "questions": questions or [{"question": "Which database?"}], **body}
        r = await self.http.post(
            f"{self.url}/v1/sessions/{session}/questions",
            json=payload,
            params=params,
            headers={**self.agent_headers, **(headers or {})},
        )
        assert r.status_code == expect, r.text
        return r.json()

    async def result(self, session: str, request_id: str, wait: float | None = None) -> httpx.Response:
        params = {"wait": wait} if wait is not None else None
        return await self.http.get(
            f"{self.url}/v1/sessions/{session}/questions/{request_id}", params=params, headers=self.agent_headers
        )

    async def admin(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return await self.http.request(method, f"{self.admin_url}{path}", headers=self.admin_headers, **kw)

    def agent_waiting(self, request_id: str) -> bool:
        """Whether an agent's ``?wait=`` is parked on this request (so a test
        can act once the wait is in place instead of sleeping). In-process only."""
        assert isinstance(self.daemon, Daemon)
        return bool(self.daemon.hub.waiters.waiting_on(request_id))


@pytest.fixture
def log_text() -> Iterator[io.StringIO]:
    """askd's real logging (JSON, debug, with its redaction) into a buffer;
    the previous configuration is restored afterwards."""
    saved, saved_level = structlog.get_config(), logs._min_level
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    access = logging.getLogger("tornado.access")
    access_disabled = access.disabled
    buf = io.StringIO()
    logs.configure("debug", "json", buf)
    try:
        yield buf
    finally:
        structlog.configure(**saved)
        logs._min_level = saved_level
        root.handlers[:] = handlers
        root.setLevel(level)
        access.disabled = access_disabled


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Override in a test module (or with indirect parametrisation) to tune the daemon."""
    return {}


@pytest.fixture
def store() -> str:
    """The daemon fixture's store: the default (SQLite in the test's state
    directory). ``tests/system/wire`` runs against every store."""
    return "sqlite"


@pytest.fixture
def client_ca() -> Path | None:
    """Override with a CA file when ``settings_overrides`` turns TLS on."""
    return None


@pytest.fixture
async def daemon(
    tmp_path: Path, store: str, settings_overrides: dict[str, Any], client_ca: Path | None
) -> AsyncIterator[RunningDaemon[Daemon]]:
    async with running_daemon(tmp_path, store, settings_overrides, client_ca) as running:
        yield running


def daemon_settings(state_dir: Path, store: str, settings_overrides: dict[str, Any]) -> Any:
    return load_settings(
        port=0, admin_port=0, state_dir=state_dir, auth={"secret": SECRET}, store=store, **settings_overrides
    )


@asynccontextmanager
async def running_daemon(
    tmp_path: Path, store: str, settings_overrides: dict[str, Any], client_ca: Path | None,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[RunningDaemon[Daemon]]:
    """The ``daemon`` fixture's daemon: in process, on port 0 (``clock``: the core's; tests move it)."""
    d = Daemon(daemon_settings(tmp_path / "state", store, settings_overrides), clock=clock)
    await d.start()
    tls = ssl.create_default_context(cafile=str(client_ca)) if client_ca else None
    async with httpx.AsyncClient(timeout=10, verify=tls or True) as http:
        running = RunningDaemon(d, http, ssl=tls)
        try:
            yield running
        finally:
            for c in running.clients:
                await c.close()
            await d.stop()


async def eventually(check: Any, timeout: float = FRAME_TIMEOUT, every: float = 0.02, what: str = "") -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check}")
        await asyncio.sleep(every)


def q(text: str = "Which database?", *labels: str, multi: bool = False, **extra: Any) -> dict[str, Any]:
    """A question object for asks."""
    out: dict[str, Any] = {"question": text, **extra}
    if labels:
        out["options"] = [{"label": label} for label in labels]
    if multi:
        out["multiSelect"] = True
    return out
