"""Who may do what (spec section 2): every kind of token against every API
family, the ``?token=`` query, the Origin check, and one user reaching for
another user's session."""

from __future__ import annotations

import base64
import json

import jwt
import pytest
import websockets

from askd import tokens
from tests.conftest import SECRET, RunningDaemon, q


def _b64(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def make_token(kind: str) -> str | None:
    """A token of the given kind; None for no token at all."""
    if kind in ("user", "agent", "admin"):
        return tokens.issue(SECRET, kind, "alice" if kind == "user" else None)  # type: ignore[arg-type]
    if kind == "none":
        return None
    if kind == "garbage":
        return "not-a-jwt"
    if kind == "wrong_secret":
        return tokens.issue("another-secret-0123456789abcdef-0123", "admin", "alice")
    if kind == "alg_none":  # unsigned, claiming every role it could want
        return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({'role': 'admin', 'sub': 'alice'})}."
    if kind == "expired":
        return tokens.issue(SECRET, "admin", "alice", ttl=-30)
    if kind == "unknown_role":  # well signed, but no role askd knows
        return jwt.encode({"role": "root", "sub": "alice"}, SECRET, algorithm="HS256")
    raise AssertionError(kind)


KINDS = ["user", "agent", "admin", "none", "garbage", "wrong_secret", "alg_none", "expired", "unknown_role"]
BAD = {"none", "garbage", "wrong_secret", "alg_none", "expired", "unknown_role"}


def expected(kind: str, role: str) -> int:
    if kind in BAD:
        return 401
    return 200 if kind == role else 403


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def ws_status(daemon: RunningDaemon, token: str | None, **kw: object) -> int:
    """The upgrade's outcome: 101, or the HTTP status that refused it."""
    try:
        conn = await websockets.connect(daemon.ws_url, additional_headers=auth(token), **kw)  # type: ignore[arg-type]
    except websockets.InvalidStatus as err:
        assert json.loads(err.response.body)["error"]["code"] in ("unauthorized", "forbidden")
        return err.response.status_code
    await conn.close()
    return 101


@pytest.mark.parametrize("kind", KINDS)
async def test_websocket_upgrade(daemon: RunningDaemon, kind: str) -> None:
    status = await ws_status(daemon, make_token(kind))
    want = expected(kind, "user")
    assert status == (101 if want == 200 else want)


@pytest.mark.parametrize("kind", KINDS)
async def test_agent_api(daemon: RunningDaemon, kind: str) -> None:
    token = make_token(kind)
    body = {"userId": "alice", "questions": [q()]}
    want = expected(kind, "agent")
    calls = [
        ("POST", "/v1/sessions/s1/questions", 201),
        ("GET", "/v1/sessions/s1/questions", 200),
        ("GET", "/v1/sessions/s1/questions/r1", 404),
        ("POST", "/v1/sessions/s1/cancel", 200),
    ]
    for method, path, ok in calls:
        r = await daemon.http.request(method, f"{daemon.url}{path}", json=body, headers=auth(token))
        assert r.status_code == (ok if want == 200 else want), (method, path, r.text)
        if want != 200:
            assert r.json()["error"]["code"] == {401: "unauthorized", 403: "forbidden"}[want]
    # refused calls asked nothing; the allowed ask was cancelled by the last call
    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert (stats["asked"], stats["cancelled"]) == ((1, 1) if want == 200 else (0, 0))


@pytest.mark.parametrize("kind", KINDS)
async def test_admin_api(daemon: RunningDaemon, kind: str) -> None:
    token = make_token(kind)
    want = expected(kind, "admin")
    calls = [
        ("GET", "/admin/v1/pending", None, 200),
        ("GET", "/admin/v1/connections", None, 200),
        ("GET", "/admin/v1/stats", None, 200),
        ("GET", "/metrics", None, 200),
        ("POST", "/admin/v1/disconnect", {"all": True}, 200),
        ("POST", "/admin/v1/sessions/s1/cancel", None, 200),
        ("POST", "/admin/v1/sessions/s1/questions/r1/answer", {"answers": {"a": "b"}}, 404),
    ]
    for method, path, body, ok in calls:
        r = await daemon.http.request(method, f"{daemon.admin_url}{path}", json=body, headers=auth(token))
        assert r.status_code == (ok if want == 200 else want), (method, path, r.text)


async def test_the_query_token_works_only_for_the_websocket(daemon: RunningDaemon) -> None:
    user = make_token("user")
    conn = await websockets.connect(f"{daemon.ws_url}?token={user}")
    await conn.send(json.dumps({"type": "ping", "id": 1}))
    assert json.loads(await conn.recv()) == {"type": "pong", "id": 1}
    await conn.close()

    for bad, status in (("garbage", 401), (make_token("agent"), 403)):
        with pytest.raises(websockets.InvalidStatus) as err:
            await websockets.connect(f"{daemon.ws_url}?token={bad}")
        assert err.value.response.status_code == status

    agent = make_token("agent")
    r = await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", params={"token": agent})
    assert r.status_code == 401
    r = await daemon.http.get(f"{daemon.admin_url}/admin/v1/stats", params={"token": make_token("admin")})
    assert r.status_code == 401


@pytest.mark.parametrize("settings_overrides", [{"allowed_origins": ["https://app.example"]}])
async def test_origin_check_on_upgrade(daemon: RunningDaemon) -> None:
    user = make_token("user")
    assert await ws_status(daemon, user, origin="https://evil.example") == 403
    assert await ws_status(daemon, user, origin="https://app.example.evil.example") == 403
    assert await ws_status(daemon, user, origin="https://app.example") == 101
    assert await ws_status(daemon, user, origin=f"http://127.0.0.1:{daemon.daemon.port}") == 101
    assert await ws_status(daemon, user) == 101  # non-browser clients send none
    # a foreign origin is refused even with a good token, and no connection is left behind
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["connections"] == 0


async def test_a_user_cannot_subscribe_to_another_users_session(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Private?")])
    bob = await daemon.connect("bob")
    await bob.send({"type": "subscribe", "sessionId": "s1", "id": "x"})
    reply = await bob.recv()
    assert reply["type"] == "error" and reply["id"] == "x"
    assert reply["payload"]["code"] == "forbidden"
    await bob.quiet()

    # `*` shows bob only his own sessions
    assert await bob.subscribe("*") == []
    await daemon.ask("s2", "alice", [q("Also private?")])
    await bob.quiet()
    conns = (await daemon.admin("GET", "/admin/v1/connections", params={"userId": "bob"})).json()["connections"]
    assert conns[0]["subscriptions"] == ["*"]
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"


async def test_a_user_cannot_answer_another_users_question(daemon: RunningDaemon) -> None:
    alice = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Private?")])
    await alice.expect("ask_user_questions")

    bob = await daemon.connect("bob")
    ack = await bob.answer("s1", asked["requestId"], {"Private?": "mine now"})
    assert ack["payload"] == {"accepted": False, "reason": "not_pending"}
    await alice.quiet()
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"
    assert (await alice.answer("s1", asked["requestId"], {"Private?": "no"}))["payload"] == {"accepted": True}
