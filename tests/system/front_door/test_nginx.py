"""askd behind a real nginx under ``/askd/`` (docs/deploy.md's configuration):
the product's promise through the proxy, who askd believes the client is,
and which pages may open ``/ws``."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import httpx
import pytest
import websockets

from tests.conftest import RunningDaemon
from tests.system.front_door.conftest import FORGED, TAB, StartProxy, remotes, survives_a_drop


async def test_a_question_survives_a_drop_and_is_answered_through_the_proxy(daemon: RunningDaemon, nginx: StartProxy) -> None:
    proxy = await nginx()
    user_token = daemon.token("user", "alice")
    await survives_a_drop(
        daemon,
        proxy,
        lambda: proxy.connect(user_token),
        lambda rid: proxy.access_log().count(f"GET /askd/v1/sessions/s1/questions/{rid} "),
    )
    log = proxy.access_log()
    assert "POST /askd/v1/sessions/s1/questions " in log and "GET /askd/ws " in log
    assert "token" not in log  # the documented log format leaves the query string out


@pytest.mark.parametrize(
    ("settings_overrides", "bind", "expected"),
    [
        pytest.param({"trusted_proxies": ["127.0.0.1"]}, None, TAB, id="trusted-proxy"),
        pytest.param({"trusted_proxies": ["127.0.0.0/31"]}, None, TAB, id="trusted-network"),
        pytest.param({"trusted_proxies": ["127.0.0.2"]}, "127.0.0.2", TAB, id="trusted-other-address"),
        pytest.param({"trusted_proxies": ["127.0.0.1"]}, "127.0.0.2", "127.0.0.2", id="untrusted-peer"),
        pytest.param({}, None, "127.0.0.1", id="nothing-trusted"),
    ],
)
async def test_only_a_trusted_proxy_sets_the_client_address(
    daemon: RunningDaemon, nginx: StartProxy, log_text: io.StringIO, bind: str | None, expected: str
) -> None:
    proxy = await nginx(bind=bind)
    # The tab forges the headers too: X-Forwarded-For is read from the right,
    # so its own entries never count, and X-Real-IP loses to it.
    await proxy.connect(daemon.token("user", "alice"), local_addr=(TAB, 0), additional_headers=FORGED)
    assert await remotes(daemon) == [expected]
    async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address=TAB)) as http:
        r = await http.get(f"{proxy.url}/v1/sessions/s1/questions", headers={**daemon.agent_headers, **FORGED})
        assert r.status_code == 200
    lines = [json.loads(line) for line in log_text.getvalue().splitlines()]
    seen = {(x["event"], x["remote"]) for x in lines if x["event"] in ("ws.connected", "http.request") and "remote" in x}
    assert ("ws.connected", expected) in seen
    assert ("http.request", expected) in seen
    assert not any(remote.startswith("203.0.113.") for _, remote in seen)


@pytest.mark.parametrize(
    ("settings_overrides", "bind", "allowed"),
    [
        # nginx sends Host without the port and X-Forwarded-Host with it (as a
        # browser's Origin has it): only believing nginx makes the page's own.
        pytest.param({"trusted_proxies": ["127.0.0.1"]}, None, True, id="trusted"),
        pytest.param({"trusted_proxies": ["127.0.0.1"]}, "127.0.0.2", False, id="untrusted"),
    ],
)
async def test_the_pages_own_origin_through_the_proxy(daemon: RunningDaemon, nginx: StartProxy, bind: str | None, allowed: bool) -> None:
    proxy = await nginx(bind=bind)
    token = daemon.token("user", "alice")
    if allowed:
        tab = await proxy.connect(token, origin=proxy.origin)
        await tab.works()
    else:
        with pytest.raises(websockets.InvalidStatus) as refused:
            await proxy.connect(token, origin=proxy.origin)
        assert refused.value.response.status_code == 403
    # Another site's page is refused whatever askd believes.
    for origin in ("http://evil.example", f"http://127.0.0.1:{proxy.port + 1}"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await proxy.connect(token, origin=origin, additional_headers={"X-Forwarded-Host": "evil.example"})
        assert refused.value.response.status_code == 403
        body: dict[str, Any] = json.loads(refused.value.response.body)
        assert body["error"]["code"] == "forbidden"


async def test_the_page_and_its_files_load_under_the_prefix(daemon: RunningDaemon, nginx: StartProxy) -> None:
    proxy = await nginx()
    async with httpx.AsyncClient() as http:
        r = await http.get(f"{proxy.url}")  # no slash: nginx redirects to the prefix
        assert r.status_code == 301 and r.headers["Location"].endswith("/askd/")
        page = await http.get(f"{proxy.url}/")
        assert page.status_code == 200 and '<title data-i18n="page.title">' in page.text  # the inbox page itself
        # Every URL in the page is relative to it; none escapes the prefix.
        refs = [ref for _, ref in re.findall(r'(href|src)="([^"]*)"', page.text)]
        assert refs and not [ref for ref in refs if ref.startswith(("/", "http:", "https:"))], refs
        for ref in refs:
            assert (await http.get(f"{proxy.url}/{ref}")).status_code == 200, ref
