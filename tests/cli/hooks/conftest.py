"""A real ``askd serve`` for the hook tests, found as agents' hooks find it:
its state directory (``askd.json`` and the secret), no URL or token flags."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from askd import state
from askd.client import AgentClient
from askd.client.discovery import Minter
from tests.support.askd_process import free_ports

_script = Path(sys.executable).with_name("askd")
ASKD = [str(_script)] if _script.exists() else [sys.executable, "-m", "askd.cli.main"]
START_TIMEOUT = 20.0  # a cold interpreter on a busy machine
RUN_TIMEOUT = 30.0
EVENTS = Path(__file__).with_name("events")


def event_text(name: str, **changes: Any) -> str:
    data = json.loads((EVENTS / f"{name}.json").read_text())
    data.update(changes)
    return json.dumps(data)


@dataclass
class Served:
    proc: subprocess.Popen[str]
    state_dir: Path
    env: dict[str, str]
    info: dict[str, Any] = field(default_factory=dict)

    def hook(self, agent: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """The hook as the agent runs it: the event to come on stdin."""
        return subprocess.Popen(
            [*ASKD, "hook", agent, *args], env={**self.env, **(env or {})},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def _token(self, role: str) -> Minter:
        secret = state.read_secret(self.state_dir)
        assert secret is not None
        return Minter(secret, role)  # type: ignore[arg-type]

    def agent(self) -> AgentClient:
        return AgentClient(f"http://127.0.0.1:{self.info['port']}", self._token("agent"))

    def admin(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(
            method, f"http://127.0.0.1:{self.info['admin_port']}/admin/v1{path}", json=body,
            headers={"Authorization": f"Bearer {self._token('admin')()}"}, timeout=RUN_TIMEOUT,
        )

    def wait_pending(self, session: str) -> dict[str, Any]:
        with self.agent() as agent:
            deadline = time.monotonic() + RUN_TIMEOUT
            while not (items := agent.pending(session)):
                assert time.monotonic() < deadline, f"no question in {session}"
                time.sleep(0.05)
        return items[0]

    def restart(self) -> None:
        assert self.stop() == 0
        self.proc = _serve(self.env, [self.info["port"], self.info["admin_port"]])

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=10)


def _drain(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:  # keeps the pipe from filling up while the daemon logs
        lines.put(line)


def _serve(env: dict[str, str], ports: list[int]) -> subprocess.Popen[str]:
    """``askd serve`` on fixed ports (a restart comes back where it was),
    returned once it listens."""
    proc = subprocess.Popen(
        [*ASKD, "serve", "--port", str(ports[0]), "--admin-port", str(ports[1]), "--log-format", "json"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_drain, args=(proc.stderr, lines), daemon=True).start()
    deadline = time.monotonic() + START_TIMEOUT
    while json.loads(lines.get(timeout=max(0.1, deadline - time.monotonic()))).get("event") != "listening":
        pass
    return proc


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env["ASKD_STATE_DIR"] = str(tmp_path / "askd-state")
    served = Served(_serve(env, free_ports(2)), tmp_path / "askd-state", env)
    try:
        served.info = json.loads((served.state_dir / "askd.json").read_text())
        yield served
    finally:
        served.stop()
