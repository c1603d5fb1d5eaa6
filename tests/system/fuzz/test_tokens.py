"""Random and forged token strings on every door: always a 401 with the
error envelope (never a 500, never in), and nothing logged at error level."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import httpx
import jwt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.system.fuzz.conftest import LiveDaemon
from tests.system.fuzz.strategies import json_values
from tests.support.profiles import scaled


def b64(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


header_safe = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=400)
claims = st.dictionaries(st.sampled_from(["role", "sub", "exp", "iat", "nbf", "aud"]), json_values, max_size=4)
forged = (
    # Well-formed JWTs with any claims, signed with the wrong key ...
    claims.map(lambda c: jwt.encode({"role": "admin", **c}, "not-the-secret-" * 3, algorithm="HS256"))
    # ... or not signed at all (alg none), or with a garbage signature.
    | claims.map(lambda c: f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(c)}.")
    | st.tuples(json_values, json_values, header_safe).map(lambda t: f"{b64(t[0])}.{b64(t[1])}.{t[2]}")
)
tokens = header_safe | forged


@pytest.fixture
def http() -> httpx.Client:
    with httpx.Client(timeout=10) as client:
        yield client  # type: ignore[misc]


def unauthorized(r: httpx.Response) -> None:
    assert r.status_code == 401, (r.status_code, r.text)
    assert r.json()["error"]["code"] == "unauthorized"


@settings(max_examples=scaled(0.6))
@given(token=tokens)
def test_forged_tokens_are_refused_everywhere(live: LiveDaemon, http: httpx.Client, token: str) -> None:
    bearer = {"Authorization": f"Bearer {token}"}
    unauthorized(http.get(f"{live.url}/v1/sessions/fz-victim/questions", headers=bearer))
    unauthorized(http.post(f"{live.url}/v1/sessions/fz-victim/cancel", headers=bearer))
    unauthorized(http.get(f"{live.admin_url}/admin/v1/pending", headers=bearer))
    unauthorized(http.get(f"{live.admin_url}/metrics", headers=bearer))
    for how in ("header", "query"):
        url = live.ws_url + (f"?token={quote(token, safe='')}" if how == "query" else "")
        with pytest.raises(InvalidStatus) as refused:
            connect(url, additional_headers=bearer if how == "header" else None, open_timeout=5).close()
        assert refused.value.response.status_code == 401
