"""A live daemon for the fuzzers, in a thread of its own.

Hypothesis runs plain (synchronous) test functions, so the daemon gets its
own event loop thread and the fuzzers talk to it over real sockets with
synchronous clients. Every log line at level error or above is captured,
from structlog and from the standard library (Tornado reports uncaught
handler exceptions there): a fuzzer fails if any appears.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from askd import tokens
from askd.config import load_settings
from askd.server.app import Daemon
from askd.server.http.base import ApiHandler
from askd.server.ws.ws import WsHandler
from tests.conftest import SECRET

# Small limits so that boundary sizes are cheap to reach.
MAX_MESSAGE_BYTES = 4096
MAX_REQUEST_BYTES = 4096
OVERRIDES: dict[str, Any] = {
    "port": 0,
    "admin_port": 0,
    "auth": {"secret": SECRET},
    "limits": {
        "max_message_bytes": MAX_MESSAGE_BYTES,
        "max_request_bytes": MAX_REQUEST_BYTES,
        # The fuzzers send fast on purpose; rate limiting has its own test.
        "frames_per_second": 1e6,
        "frames_burst": 1_000_000,
        "max_pending_per_session": 1000,
    },
}


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class LiveDaemon:
    """A daemon running in its own loop thread, and its captured errors."""

    def __init__(self, state_dir: Path) -> None:
        self.settings = load_settings(**OVERRIDES, state_dir=state_dir)
        self.errors = _ErrorRecords()
        self.structlog_events: list[dict[str, Any]] = []
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fuzzed-daemon", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.daemon = Daemon(self.settings)
        await self.daemon.start()
        self._ready.set()
        await self._stop.wait()
        await self.daemon.stop()

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10), "the daemon did not start"
        self.url = f"http://127.0.0.1:{self.daemon.port}"
        self.admin_url = f"http://127.0.0.1:{self.daemon.admin_port}"
        self.ws_url = f"ws://127.0.0.1:{self.daemon.port}/ws"

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def on_loop(self, fn: Any) -> Any:
        """Run ``fn()`` on the daemon's loop (where its state lives) and return the result."""

        async def call() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(5)

    def token(self, role: str, sub: str | None = None) -> str:
        return tokens.issue(SECRET, role, sub)  # type: ignore[arg-type]

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(role)}"}

    def failures(self) -> list[str]:
        """Error-level log lines so far: each an unhandled exception or worse."""
        out = [f"{r.name}: {r.getMessage()}" for r in self.errors.records]
        out += [str(e) for e in self.structlog_events if e.get("log_level") in ("error", "critical", "exception")]
        return out


@pytest.fixture(scope="package")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDaemon]:
    live = LiveDaemon(tmp_path_factory.mktemp("fuzz") / "state")
    root = logging.getLogger()
    root.addHandler(live.errors)
    with structlog.testing.capture_logs() as events:
        live.structlog_events = events
        live.start()
        try:
            yield live
        finally:
            live.stop()
            root.removeHandler(live.errors)


@pytest.fixture(scope="package")
def victims(live: LiveDaemon) -> list[dict[str, Any]]:
    """Questions that must come out of all the fuzzing pending and untouched."""
    out = []
    with httpx.Client(timeout=10) as http:
        for user, session in (("fuzzer", "fz-own"), ("victim", "fz-victim")):
            body = {"userId": user, "questions": [{"question": "Untouched?", "options": [{"label": "yes"}]}], "metadata": {"m": 1}}
            r = http.post(f"{live.url}/v1/sessions/{session}/questions", json=body, headers=live.headers("agent"))
            assert r.status_code == 201, r.text
            out.append(r.json())
    return out


@pytest.fixture(autouse=True)
def _untouched(live: LiveDaemon, victims: list[dict[str, Any]], caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """After each fuzzer: nothing logged an error, the victims are still
    pending as they were, and no connection or waiter was left behind."""
    yield
    assert live.failures() == []
    with httpx.Client(timeout=10) as http:
        pending = http.get(f"{live.admin_url}/admin/v1/pending", headers=live.headers("admin")).json()["pending"]
    by_id = {p["requestId"]: p for p in pending}
    for v in victims:
        kept = by_id.get(v["requestId"])
        assert kept is not None, f"{v['requestId']} is no longer pending"
        assert kept["questions"] == [{"question": "Untouched?", "options": [{"label": "yes"}]}]
        assert kept["metadata"] == {"m": 1} and kept["expiresAt"] == v["expiresAt"]
    hub = live.daemon.hub
    leftovers = live.on_loop(lambda: (len(hub.registry.connections()), hub.waiting()))
    # Sockets the fuzzer closed may take a moment to be noticed.
    deadline = 50
    while leftovers != (0, 0) and deadline:
        threading.Event().wait(0.05)
        leftovers = live.on_loop(lambda: (len(hub.registry.connections()), hub.waiting()))
        deadline -= 1
    assert leftovers == (0, 0), f"connections and waiters left behind: {leftovers}"
    # Memory does not grow with hostile input: no handler object (WebSocket
    # or HTTP) outlives its connection or request.
    # pytest keeps this test's log records, and Tornado's "Malformed HTTP
    # message" record carries its exception: traceback, frame, and so the
    # request's handler. That is the test's memory, not the daemon's (and the
    # record is only made when an earlier test left the root logger at info).
    caplog.get_records("call").clear()
    gc.collect()
    held = [type(o).__name__ for o in gc.get_objects() if isinstance(o, (WsHandler, ApiHandler))]
    assert held == [], f"handler objects still alive: {held[:5]} ({len(held)})"


class UserTab:
    """A synchronous tab of the fuzzing user, so that asks get pushed (and encoded)."""

    def __init__(self, live: LiveDaemon) -> None:
        from websockets.sync.client import connect

        # max_queue=None: pushes it never reads must not stall its closing handshake.
        self._cm = connect(live.ws_url, additional_headers={"Authorization": f"Bearer {live.token('user', 'fuzzer')}"}, max_queue=None)
        self.conn = self._cm.__enter__()

    def next_ask(self, rid: str) -> dict[str, Any]:
        while True:
            frame = json.loads(self.conn.recv(timeout=5))
            if frame["type"] == "ask_user_questions" and frame["payload"]["requestId"] == rid:
                return frame

    def send_raw(self, text: str) -> None:
        self.conn.send(text)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


@pytest.fixture
def tab_for_fuzzer(live: LiveDaemon) -> Iterator[UserTab]:
    tab = UserTab(live)
    yield tab
    tab.close()
