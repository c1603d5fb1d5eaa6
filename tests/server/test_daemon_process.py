"""``askd serve`` as a real process: what it announces and writes, the secret
it generates, tokens minted by ``askd token issue``, one-line config errors
with exit code 2, and the graceful stop on SIGTERM. Also: no token ever
reaches the logs."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import stat
import time
from pathlib import Path

import httpx
import pytest
import websockets

from askd import state, tokens
from tests.support.askd_process import ASKD, START_TIMEOUT, STOP_TIMEOUT, ServeProcess, spawn
from tests.conftest import FRAME_TIMEOUT, WsClient
from tests.receipts.independent import receipted


@pytest.fixture
async def serve(tmp_path: Path):
    started: list[ServeProcess] = []

    async def start(*args: str) -> ServeProcess:
        sp = await spawn("--port", "0", "--admin-port", "0", *args)
        started.append(sp)
        return sp

    yield start
    for sp in started:  # only the processes this test started
        await sp.kill()


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *ASKD, *args,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), START_TIMEOUT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_serve_announces_mints_serves_and_stops_gracefully(serve, tmp_path: Path) -> None:
    state_dir = tmp_path / "state"  # ASKD_STATE_DIR, set by the autouse fixture
    daemon = await serve("--log-level", "debug")
    listening = await daemon.listening()
    port, admin_port = listening["port"], listening["admin_port"]
    assert isinstance(port, int) and isinstance(admin_port, int) and port > 0 and admin_port > 0

    info = json.loads((state_dir / "askd.json").read_text())
    assert (info["port"], info["admin_port"], info["pid"]) == (port, admin_port, daemon.proc.pid)
    secret_file = state_dir / "secret"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    secret = state.read_secret(state_dir)
    assert secret and len(secret) >= 32

    (c1, agent_token, _), (c2, user_token, _) = await asyncio.gather(
        run_cli("token", "issue", "--role", "agent"),
        run_cli("token", "issue", "--role", "user", "--sub", "alice"),
    )
    assert (c1, c2) == (0, 0)
    agent_token, user_token = agent_token.strip(), user_token.strip()
    admin_token = tokens.issue(secret, "admin")

    base = f"http://127.0.0.1:{port}"
    conn = await websockets.connect(f"ws://127.0.0.1:{port}/ws?token={user_token}")
    tab = WsClient(conn)
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            agent = {"Authorization": f"Bearer {agent_token}"}
            r = await http.get(f"http://127.0.0.1:{admin_port}/admin/v1/stats", headers={"Authorization": f"Bearer {admin_token}"})
            assert r.json()["connections"] == 1

            waiting = asyncio.create_task(
                http.post(
                    f"{base}/v1/sessions/s1/questions",
                    params={"wait": 30},
                    json={"userId": "alice", "questions": [{"question": "Stop?"}]},
                    headers=agent,
                )
            )
            pushed = await tab.expect("ask_user_questions")  # the agent is now parked in its wait
            rid = pushed["payload"]["requestId"]

            daemon.proc.send_signal(signal.SIGTERM)
            stopped_at = time.monotonic()
            r = await asyncio.wait_for(waiting, FRAME_TIMEOUT)
            assert time.monotonic() - stopped_at < 3
            assert r.status_code == 503
            assert r.json()["error"]["code"] == "shutting_down" and r.json()["error"]["message"]
            assert await tab.closed() == 1001
    finally:
        await tab.close()
    assert await daemon.exit_code(FRAME_TIMEOUT) == 0
    assert not (state_dir / "askd.json").exists()

    logs = daemon.log_text()
    assert "Next: " not in logs  # the hint is for a terminal; collected logs stay JSON lines
    for secret_text in (user_token, agent_token, admin_token, secret):
        assert secret_text not in logs
    assert "token=[REDACTED]" in logs  # the /ws access line was logged, redacted
    asked = daemon.named("question.asked")
    assert asked and asked[0]["sessionId"] == "s1" and asked[0]["requestId"] == rid and asked[0]["userId"] == "alice"
    connected = daemon.named("ws.connected")
    assert connected and connected[0]["userId"] == "alice" and connected[0]["connectionId"]
    assert daemon.named("ws.disconnected")[0]["code"] == 1001
    assert daemon.named("stopped")


def test_on_a_terminal_serve_says_what_to_do_next(tmp_path: Path) -> None:
    import pty
    import select
    import subprocess

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*ASKD, "serve", "--port", "0", "--admin-port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower,
    )  # ASKD_STATE_DIR: tmp_path/"state", from the autouse fixture
    os.close(follower)
    seen = b""
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while b"\nNext: " not in seen or not seen.endswith(b"\n"):
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            if select.select([leader], [], [], 0.5)[0]:
                seen += os.read(leader, 65536)
    finally:
        proc.terminate()
        proc.wait(STOP_TIMEOUT)
        os.close(leader)
    line = seen.decode().split("\nNext: ", 1)[1].splitlines()[0]
    assert f"ASKD_STATE_DIR={tmp_path / 'state'} askd open --user YOU" in line
    assert re.search(r"agents ask with POST http://127\.0\.0\.1:[1-9][0-9]*/v1/sessions/SESSION/questions$", line), line


def test_the_next_step_names_askd_as_this_shell_can_run_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from askd.server.from_settings import _askd_command

    monkeypatch.setenv("PATH", str(tmp_path))  # no askd on it
    monkeypatch.setattr("sys.argv", [".venv/bin/askd", "serve"])
    assert _askd_command() == ".venv/bin/askd"  # as make serve started it
    (tmp_path / "askd").write_text("#!/bin/sh\n")
    (tmp_path / "askd").chmod(0o755)
    monkeypatch.setattr("sys.argv", [str(tmp_path / "askd"), "serve"])
    assert _askd_command() == "askd"  # the one on the PATH


async def test_invalid_config_exits_2_with_one_line_naming_the_setting(tmp_path: Path) -> None:
    bad_syntax = tmp_path / "syntax.toml"
    bad_syntax.write_text("port = [\n")
    cases = {  # what must be named: (args, env); every other bad value is in test_config.py
        "ASKD_PORT": ([], {"ASKD_PORT": "99999"}),
        "syntax.toml": (["--config", str(bad_syntax)], {}),
        "did you mean ASKD_QUESTION_TIMEOUT_SECONDS?": ([], {"ASKD_QUESTION_TIMEOUT": "60"}),  # a typo never starts silently
    }
    # concurrently: each is a cold interpreter start
    results = await asyncio.gather(*(run_cli("serve", *args, env=env) for args, env in cases.values()))
    for name, (code, _, err) in zip(cases, results):
        lines = err.strip().splitlines()
        assert code == 2, (name, err)
        assert len(lines) == 1 and name in lines[0], (name, err)
    assert not (tmp_path / "state" / "askd.json").exists()


async def test_serve_on_uvloop_answers_a_round_trip(serve, tmp_path: Path) -> None:
    pytest.importorskip("uvloop")  # in the test extras; absent only on platforms uvloop does not support
    daemon = await serve("--loop", "uvloop")
    listening = await daemon.listening()
    assert listening["loop"] == "uvloop"
    secret = state.read_secret(tmp_path / "state")
    assert secret is not None
    agent = {"Authorization": f"Bearer {tokens.issue(secret, 'agent')}"}
    admin = {"Authorization": f"Bearer {tokens.issue(secret, 'admin')}"}
    base, admin_base = f"http://127.0.0.1:{listening['port']}", f"http://127.0.0.1:{listening['admin_port']}"
    async with httpx.AsyncClient(timeout=10) as http:
        asked = await http.post(
            f"{base}/v1/sessions/s1/questions",
            json={"userId": "alice", "questions": [{"question": "Fast?", "options": [{"label": "yes"}]}]},
            headers=agent,
        )
        assert asked.status_code == 201, asked.text
        rid = asked.json()["requestId"]
        waiting = asyncio.create_task(http.get(f"{base}/v1/sessions/s1/questions/{rid}", params={"wait": 10}, headers=agent))
        r = await http.post(f"{admin_base}/admin/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Fast?": "yes"}}, headers=admin)
        assert r.json() == {"accepted": True}
        result = (await waiting).json()
    assert receipted(result) == {"requestId": rid, "sessionId": "s1", "status": "answered", "answers": {"Fast?": "yes"}, "answeredBy": None, "via": "admin"}
    daemon.proc.send_signal(signal.SIGTERM)
    assert await daemon.exit_code(10) == 0
