"""Tokens end (spec M): a WebSocket lives no longer than its token, tokens
issued before ``auth.not_before`` are refused, a ``sub`` with control
characters is refused, and no spelling of ``?token=`` reaches a log."""

from __future__ import annotations

import asyncio
import io
import time

import jwt
import pytest
import websockets

from tests.conftest import SECRET, RunningDaemon


async def test_a_socket_is_closed_with_4001_when_its_token_expires(daemon: RunningDaemon) -> None:
    token = daemon.token("user", "alice", ttl=1.5)
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    conn = await websockets.connect(daemon.ws_url, additional_headers={"Authorization": f"Bearer {token}"})
    other = await daemon.connect("alice")  # a token without exp stays
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await asyncio.wait_for(conn.recv(), 5)
    late = time.time() - expires
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
    assert -0.1 < late < 2.0, late  # at the deadline, not at some later scan
    await other.works()


@pytest.mark.parametrize("sub", ["al\nice", "al\x00ice", "al\x1bice", "al\x85ice"])
async def test_a_sub_with_control_characters_is_refused(daemon: RunningDaemon, sub: str) -> None:
    token = jwt.encode({"role": "user", "sub": sub, "iat": int(time.time())}, SECRET, algorithm="HS256")
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(daemon.ws_url, additional_headers={"Authorization": f"Bearer {token}"})
    assert refused.value.response.status_code == 401
    agent = jwt.encode({"role": "agent", "sub": sub, "iat": int(time.time())}, SECRET, algorithm="HS256")
    r = await daemon.http.get(f"{daemon.url}/v1/sessions/s/questions/r", headers={"Authorization": f"Bearer {agent}"})
    assert r.status_code == 401


async def test_a_percent_encoded_token_query_is_redacted_from_logs(daemon: RunningDaemon, log_text: io.StringIO) -> None:
    for query in ("%74oken=opensesame1", "tok%65n=opensesame2", "%2574oken=opensesame3"):
        await daemon.http.get(f"{daemon.url}/ws?{query}")
    text = log_text.getvalue()
    assert "http.request" in text and "opensesame" not in text


@pytest.fixture
def not_before(monkeypatch: pytest.MonkeyPatch) -> float:
    at = time.time() - 60
    monkeypatch.setenv("ASKD_AUTH__NOT_BEFORE", str(at))
    return at


async def test_tokens_issued_before_not_before_are_refused(not_before: float, daemon: RunningDaemon) -> None:
    def token(**claims: object) -> dict[str, str]:
        return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}

    url = f"{daemon.url}/v1/sessions/s/questions/r"
    assert (await daemon.http.get(url, headers=token(role="agent", iat=int(not_before) - 5))).status_code == 401
    assert (await daemon.http.get(url, headers=token(role="agent"))).status_code == 401  # no iat: as old as can be
    assert (await daemon.http.get(url, headers=daemon.agent_headers)).status_code == 404  # issued now: let in
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(daemon.ws_url, additional_headers=token(role="user", sub="al", iat=int(not_before) - 5))
    assert refused.value.response.status_code == 401
    await (await daemon.connect("al")).works()
