"""``POST /v1/open`` on one daemon, on each local store: a code gives its
user a token once; a second use, racing uses, a forged or an expired code
get none."""

from __future__ import annotations

import asyncio

from askd import tokens
from tests.conftest import SECRET, RunningDaemon
from tests.support.open_codes import exchange, new_code, refused_as_used, user_of


async def test_a_code_gives_its_users_token_once(daemon: RunningDaemon) -> None:
    code = new_code("alice")
    assert user_of(await exchange(daemon.http, daemon.url, code)) == "alice"
    assert refused_as_used(await exchange(daemon.http, daemon.url, code))
    assert user_of(await exchange(daemon.http, daemon.url, new_code("alice"))) == "alice"  # a fresh code works


async def test_racing_uses_of_one_code_give_one_token(daemon: RunningDaemon) -> None:
    code = new_code()
    got = await asyncio.gather(*(exchange(daemon.http, daemon.url, code) for _ in range(8)))
    assert sorted(r.status_code for r in got) == [200] + [401] * 7
    assert sum(refused_as_used(r) for r in got) == 7


async def test_forged_and_expired_codes_get_nothing(daemon: RunningDaemon) -> None:
    forged = tokens.issue_open_code("another-secret-0123456789abcdef-0123", "alice", None)
    expired = tokens.issue_open_code(SECRET, "alice", None, lifetime=-1)
    for code, says in [(forged, "not an askd link code"), (expired, "expired")]:
        r = await exchange(daemon.http, daemon.url, code)
        assert r.status_code == 401 and says in r.json()["error"]["message"], r.text
