"""askd behind a real Caddy under ``/askd/`` (docs/deploy.md's Caddyfile):
the drop, re-push and answer through the proxy with an agent long-polling,
the page and its files under the prefix, who askd believes the client is,
which pages may open ``/ws``, and no token in Caddy's access log."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
import websockets

from tests.conftest import RunningDaemon, WsClient, eventually
from tests.system.front_door.caddy import CADDY, CaddyProxy, start_caddy
from tests.system.front_door.conftest import FORGED, TAB, need, remotes, survives_a_drop

StartCaddy = Callable[[], Awaitable[CaddyProxy]]


@pytest.fixture
async def caddy(daemon: RunningDaemon, tmp_path: Path) -> AsyncIterator[StartCaddy]:
    """``await caddy()`` starts Caddy in front of the daemon under ``/askd/``."""
    need(CADDY, "caddy")
    proxies: list[CaddyProxy] = []

    async def start() -> CaddyProxy:
        proxy = await start_caddy(tmp_path, daemon.daemon.port)
        proxies.append(proxy)
        return proxy

    yield start
    for proxy in proxies:
        await proxy.stop()


async def test_a_question_survives_a_drop_and_is_answered_through_caddy(daemon: RunningDaemon, caddy: StartCaddy) -> None:
    proxy = await caddy()
    user_token = daemon.token("user", "alice")

    async def open_tab() -> WsClient:
        # As the page does: the token in the socket's URL, which the
        # documented log filter must keep out of Caddy's access log.
        tab = WsClient(await websockets.connect(f"{proxy.ws_url}?token={user_token}"))
        proxy.clients.append(tab)
        return tab

    def long_polls(rid: str) -> int:
        return sum(r["uri"].startswith(f"/askd/v1/sessions/s1/questions/{rid}?wait=") for r in proxy.requests())

    await survives_a_drop(daemon, proxy, open_tab, long_polls)
    await eventually(lambda: any(r["uri"].startswith("/askd/ws") for r in proxy.requests()), what="the socket's log line")
    uris = [r["uri"] for r in proxy.requests()]
    assert "/askd/v1/sessions/s1/questions?wait=0.3" in uris  # the ask, long-polling itself
    # No token at all: the documented filter deletes the socket's ?token=,
    # and Caddy leaves the agent's Authorization header out by itself.
    assert "eyJ" not in proxy.access_log()


async def test_the_page_and_its_files_load_under_the_prefix(daemon: RunningDaemon, caddy: StartCaddy) -> None:
    proxy = await caddy()
    async with httpx.AsyncClient() as http:
        r = await http.get(proxy.url)  # no slash: the documented redir adds it
        assert r.is_redirect and r.headers["Location"] == "/askd/"
        page = await http.get(f"{proxy.url}/")
        assert page.status_code == 200 and '<title data-i18n="page.title">' in page.text  # the inbox page itself
        refs = [ref for _, ref in re.findall(r'(href|src)="([^"]*)"', page.text)]
        assert refs and not [ref for ref in refs if ref.startswith(("/", "http:", "https:"))], refs
        for ref in refs:
            assert (await http.get(f"{proxy.url}/{ref}")).status_code == 200, ref


@pytest.mark.parametrize(
    ("settings_overrides", "expected"),
    [
        pytest.param({"trusted_proxies": ["127.0.0.1"]}, TAB, id="trusted"),
        pytest.param({}, "127.0.0.1", id="nothing-trusted"),
    ],
)
async def test_the_client_address_comes_from_caddy_only_when_trusted(
    daemon: RunningDaemon, caddy: StartCaddy, expected: str
) -> None:
    proxy = await caddy()
    # The tab forges the headers: Caddy replaces them with what it saw.
    await proxy.connect(daemon.token("user", "alice"), local_addr=(TAB, 0), additional_headers=FORGED)
    assert await remotes(daemon) == [expected]


async def test_the_pages_own_origin_through_caddy(daemon: RunningDaemon, caddy: StartCaddy) -> None:
    proxy = await caddy()
    token = daemon.token("user", "alice")
    # Caddy keeps the browser's Host, so the page's own origin matches.
    tab = await proxy.connect(token, origin=proxy.origin)
    await tab.works()
    for origin in ("http://evil.example", f"http://127.0.0.1:{proxy.port + 1}"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await proxy.connect(token, origin=origin, additional_headers={"X-Forwarded-Host": "evil.example"})
        assert refused.value.response.status_code == 403
