"""Security checks beyond the auth matrix (``test_auth.py``): where the admin
listener binds, what reaches the logs when hostile or failed requests carry
tokens, and the state directory's permissions under a careless umask."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import httpx
import pytest
import websockets

from askd import tokens
from askd.config import load_settings
from askd.server.app import Daemon
from tests.conftest import SECRET, RunningDaemon


def test_the_admin_listener_stays_on_loopback_whatever_the_public_host(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().admin_host == "127.0.0.1"
    assert load_settings(host="0.0.0.0").admin_host == "127.0.0.1"
    monkeypatch.setenv("ASKD_HOST", "0.0.0.0")
    assert load_settings().admin_host == "127.0.0.1"


async def test_the_running_admin_listener_is_bound_to_loopback_only(daemon: RunningDaemon) -> None:
    admin_server = daemon.daemon._servers[1]
    addresses = {s.getsockname()[0] for s in admin_server._sockets.values()}
    assert addresses and addresses <= {"127.0.0.1", "::1"}, addresses


async def test_tokens_and_the_secret_never_reach_the_logs(daemon: RunningDaemon, log_text: io.StringIO) -> None:
    user_token = daemon.token("user", "alice")
    expired = tokens.issue(SECRET, "agent", ttl=-60)
    forged = tokens.issue("another-secret-0123456789abcdef-0123", "admin")
    wrong_role = daemon.token("user", "mallory")
    used = [user_token, expired, forged, wrong_role, daemon.token("agent"), daemon.token("admin")]

    # A good token in the query, and bad ones in the query and the header.
    tab = await websockets.connect(f"{daemon.ws_url}?token={user_token}")
    await tab.close()
    for token in (expired, forged):
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(f"{daemon.ws_url}?token={token}&x=1")
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(daemon.ws_url, additional_headers={"Authorization": f"Bearer {token}"})
    async with httpx.AsyncClient(timeout=10) as http:
        for token in (expired, forged, wrong_role):
            r = await http.get(f"{daemon.url}/v1/sessions/s1/questions", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code in (401, 403)
            r = await http.get(f"{daemon.admin_url}/admin/v1/stats", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code in (401, 403)
        # An agent that puts a token where ids go: path, session id, query.
        await daemon.ask(user_token, "alice", params={"token": forged, "wait": 0})
        await daemon.result(user_token, "nope")

    text = log_text.getvalue()
    assert '"http.request"' in text and "ws.connected" in text  # the requests above were logged
    assert "[REDACTED]" in text
    for token in used:
        signature = token.rsplit(".", 1)[1]
        assert signature not in text, "a token's signature reached the logs"
    assert SECRET not in text


async def test_a_generated_secret_is_private_even_under_a_careless_umask(tmp_path: Path) -> None:
    state_dir = tmp_path / "fresh" / "state"
    old = os.umask(0)
    try:
        daemon = Daemon(load_settings(port=0, admin_port=0, state_dir=state_dir))
    finally:
        os.umask(old)
    secret_file = state_dir / "secret"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    assert daemon.ctx.secret == secret_file.read_text().strip() and len(daemon.ctx.secret) >= 32
