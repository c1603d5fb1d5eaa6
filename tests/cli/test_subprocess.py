"""The CLI as a user runs it: real processes, ``askd serve`` on port 0 with
its state directory in tmp, and no URL or token flags anywhere, so every
command finds the daemon through ``askd.json`` and the generated secret."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from askd import state
from askd.client import AdminClient
from askd.client.discovery import Minter

_script = Path(sys.executable).with_name("askd")
ASKD = [str(_script)] if _script.exists() else [sys.executable, "-m", "askd.cli.main"]
START_TIMEOUT = 20.0  # a cold interpreter on a busy machine
RUN_TIMEOUT = 30.0


@dataclass
class Served:
    proc: subprocess.Popen[str]
    state_dir: Path
    env: dict[str, str]
    info: dict[str, Any] = field(default_factory=dict)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ASKD, *args], env=self.env, capture_output=True, text=True, timeout=RUN_TIMEOUT)

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*ASKD, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def admin(self) -> AdminClient:
        """The library's view, to wait on the daemon without a process per poll."""
        secret = state.read_secret(self.state_dir)
        assert secret is not None
        return AdminClient(f"http://127.0.0.1:{self.info['admin_port']}", Minter(secret, "admin"))

    def wait_pending(self, session: str) -> dict[str, Any]:
        with self.admin() as admin:
            deadline = time.monotonic() + RUN_TIMEOUT
            while not (items := admin.pending(session=session)):
                assert time.monotonic() < deadline, f"no question in {session}"
                time.sleep(0.05)
        return items[0]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=10)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _drain(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:  # keeps the pipe from filling up while the daemon logs
        lines.put(line)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env["ASKD_STATE_DIR"] = str(tmp_path / "askd-state")
    proc = subprocess.Popen(
        [*ASKD, "serve", "--port", "0", "--admin-port", "0", "--log-format", "json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_drain, args=(proc.stderr, lines), daemon=True).start()
    served = Served(proc, tmp_path / "askd-state", env)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            event = json.loads(line)
            if event.get("event") == "listening":
                break
        served.info = json.loads((served.state_dir / "askd.json").read_text())
        assert (served.info["port"], served.info["admin_port"]) == (event["port"], event["admin_port"])
        yield served
    finally:
        assert served.stop() == 0
    assert not (served.state_dir / "askd.json").exists()  # removed on a clean stop


def test_ask_list_disconnect_answer_with_no_flags(served: Served) -> None:
    """The walk-through (docs/walkthrough.md): ask in one terminal, look, drop the
    user's connection, answer by hand, and the ask prints the answer."""
    token = served.run("token", "issue", "--role", "user", "--sub", "alice").stdout.strip()
    ws_url = f"ws://127.0.0.1:{served.info['port']}/ws"
    with connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"}) as tab:
        ask = served.spawn("ask", "--user", "alice", "--session", "s1", "--question", "Which database?", "--option", "PostgreSQL", "--option", "SQLite")
        try:
            frame = json.loads(tab.recv(timeout=RUN_TIMEOUT))
            assert frame["type"] == "ask_user_questions"
            rid = frame["payload"]["requestId"]

            listing = served.run("pending", "list")
            assert listing.returncode == 0, listing.stderr
            assert rid in listing.stdout and "Which database?" in listing.stdout and "alice" in listing.stdout

            dropped = served.run("disconnect", "--user", "alice")
            assert (dropped.returncode, dropped.stdout) == (0, "Disconnected 1 connection (abort).\n")
            with pytest.raises(ConnectionClosed):
                tab.recv(timeout=10)
            still = json.loads(served.run("pending", "list", "--json").stdout)
            assert [p["requestId"] for p in still] == [rid]  # a disconnect never ends a question
            assert ask.poll() is None

            answered = served.run("pending", "answer", "s1", rid, "--answer", "Which database?=SQLite")
            assert answered.returncode == 0, answered.stderr
            out, err = ask.communicate(timeout=RUN_TIMEOUT)
            assert (ask.returncode, out) == (0, "SQLite\n"), err
        finally:
            if ask.poll() is None:
                ask.kill()
                ask.communicate()

    status = served.run("status")
    assert status.returncode == 0 and "is up" in status.stdout and "1 answered" in status.stdout


def test_exit_codes(served: Served) -> None:
    timed_out = served.run("ask", "--user", "alice", "--session", "s1", "--question", "Anyone?", "--timeout", "0.3")
    assert timed_out.returncode == 3 and "Timed out" in timed_out.stderr

    ask = served.spawn("ask", "--user", "alice", "--session", "s2", "--question", "Deploy?", "--json")
    served.wait_pending("s2")
    cancelled = served.run("cancel", "s2")
    assert (cancelled.returncode, cancelled.stdout) == (0, "Cancelled 1 question in session s2 and its sub-sessions.\n")
    out, _ = ask.communicate(timeout=RUN_TIMEOUT)
    assert ask.returncode == 4 and json.loads(out)["status"] == "cancelled"

    wrong = served.run("pending", "list", "--token", "not-a-token")
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert wrong.stderr.count("\n") == 1 and wrong.stderr.startswith("askd: the token was refused (401): ")

    usage = served.run("pending", "answer", "s1")
    assert usage.returncode == 2

    assert served.stop() == 0
    # askd.json is gone: the commands fall back to the configured port (one
    # that nothing listens on, not the shared default 8766)
    served.env["ASKD_ADMIN_PORT"] = port = str(closed_port())
    down = served.run("status")
    assert down.returncode == 1 and "askd is not running" in down.stdout
    gone = served.run("pending", "list")
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert gone.stderr.startswith(f"askd: cannot reach askd at http://127.0.0.1:{port} ")
