"""The inbox page in Chromium through nginx under ``/askd/``, from the link
``askd open`` prints: a drop, a refresh, a session link, an answer and
the History view, every request staying under the prefix."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

from tests.system.browser.conftest import OpenInbox, Tab, browser, inbox  # noqa: F401  (fixtures)
from tests.cli.conftest import _daemon_logs_apart  # noqa: F401  (autouse: the CLI's stdout stays its own)
from tests.cli.test_commands import askd
from tests.conftest import SECRET, RunningDaemon, eventually, q
from tests.system.front_door.conftest import StartProxy

pytestmark = pytest.mark.browser


def watch_requests(tab: Tab, origin: str) -> list[str]:
    """Every request to ``origin`` that fails or is refused."""
    bad: list[str] = []
    tab.page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 and r.url.startswith(origin) else None)
    tab.page.on("requestfailed", lambda r: bad.append(f"failed {r.url}") if r.url.startswith(origin) else None)
    return bad


@pytest.mark.parametrize("settings_overrides", [{"trusted_proxies": ["127.0.0.1"]}])
async def test_the_inbox_under_a_prefix_survives_a_drop_and_a_refresh_and_answers(
    daemon: RunningDaemon, nginx: StartProxy, inbox: OpenInbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = await nginx()
    # `askd open` with ASKD_PUBLIC_URL prints the link through the proxy.
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    opened = await askd("open", "--user", "alice", "--no-browser", env={"ASKD_PUBLIC_URL": f"{proxy.url}/"})
    # Its health check went through nginx: stderr says only how long the link lives.
    assert (opened.exit_code, opened.stderr) == (0, "askd: the link logs in once, within 60 seconds; run `askd open` again for another\n"), opened.stderr
    link = opened.stdout.strip()
    assert link.startswith(f"{proxy.url}/#code=")  # a one-time code, never the token

    tab = await inbox(None, connected=False)
    bad = watch_requests(tab, proxy.origin)
    await tab.page.goto(link.replace("/#", "/?retry=50#"))
    await tab.connected()
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    rid = asked["requestId"]
    panel = tab.panel(rid)
    await expect(panel).to_be_visible()

    # A drop between nginx and askd: the page reconnects through the proxy.
    await tab.record_conn_states()
    r = await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    assert r.json() == {"disconnected": 1}
    # It may be back within a few ms: watch the states it went through.
    await eventually(lambda: tab.conn_states(), what="the page to notice the drop")
    await tab.connected()
    assert "waiting" in await tab.conn_states()
    await expect(panel).to_be_visible()

    # A refresh: the page, its files and the question come back, all under /askd/.
    await tab.page.reload()
    await tab.connected()
    await expect(panel).to_be_visible()
    assert tab.page.url == f"{proxy.url}/?retry=50"

    # The session link stays under the prefix too.
    await tab.page.get_by_role("link", name="Only this session").click()
    await expect(tab.page.locator("#focus-name")).to_have_text("s1")
    assert tab.page.url == f"{proxy.url}/?session=s1"
    await tab.connected()

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await panel.get_by_label("yes").check()
    await panel.get_by_role("button", name="Submit").click()
    await expect(tab.note(rid)).to_contain_text("Answered.")
    assert (await asyncio.wait_for(waiting, 10)).json()["answers"] == {"Deploy?": "yes"}

    # History is fetched under the prefix too.
    await tab.page.get_by_role("button", name="History", exact=True).click()
    await expect(tab.page.locator(f'li.hist[data-request-id="{rid}"] .hist-status')).to_have_text("Answered")

    assert bad == []
    log = proxy.access_log()
    paths = [line.split('"')[1].split()[1] for line in log.splitlines()]
    assert "/askd/static/app.js" in paths and "/askd/ws" in paths and "/askd/v1/me/history" in paths
    assert [p for p in paths if not p.startswith("/askd/")] == []
    # The documented log format leaves the query string out, so a token
    # sent as ?token= never reaches the log (the page's own module token.js
    # is a path, not a secret).
    assert [p for p in paths if "?" in p] == []
    assert "token=" not in log and "access_token" not in log
