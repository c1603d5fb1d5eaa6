"""``askd open``'s one-time code as the page exchanges it (``POST /v1/open``)."""

from __future__ import annotations

import httpx
import jwt

from askd import tokens
from tests.conftest import SECRET


def new_code(user: str = "alice") -> str:
    return tokens.issue_open_code(SECRET, user, None)


async def exchange(http: httpx.AsyncClient, url: str, code: str) -> httpx.Response:
    return await http.post(f"{url}/v1/open", json={"code": code})


def user_of(r: httpx.Response) -> str:
    """The user whose token a successful exchange gave (checked to be a user token)."""
    assert r.status_code == 200, r.text
    body = r.json()
    claims = jwt.decode(body["token"], SECRET, algorithms=["HS256"])
    assert claims["role"] == "user" and claims["sub"] == body["userId"]
    return str(body["userId"])


def refused_as_used(r: httpx.Response) -> bool:
    return r.status_code == 401 and "already used" in r.json()["error"]["message"]
