"""An answer link through nginx under ``/askd/`` (docs/deploy.md's
configuration) in Chromium: the page, its stylesheet and its form all stay
under the prefix, and *Confirm* answers."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from askd.channels import links
from tests.system.browser.conftest import browser  # noqa: F401  (the fixture)
from tests.conftest import SECRET, RunningDaemon, q
from tests.system.front_door.conftest import StartProxy

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("settings_overrides", [{"trusted_proxies": ["127.0.0.1"]}])
async def test_a_link_under_a_prefix_loads_its_page_and_answers(daemon: RunningDaemon, nginx: StartProxy, browser: Any) -> None:  # noqa: F811
    proxy = await nginx()
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    # What askd hands out with public_url = the proxy's /askd/.
    url = links.url(f"{proxy.url}/", links.mint(SECRET, "s1", rid, "alice", 1))
    ctx = await browser.new_context(viewport={"width": 360, "height": 740})
    page = await ctx.new_page()
    bad: list[str] = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: bad.append(m.text) if m.type == "error" else None)
    try:
        await page.goto(url)
        styled = await page.evaluate("() => getComputedStyle(document.querySelector('button.primary')).fontWeight")
        assert styled == "600"  # /askd/static/link.css, under the page's CSP
        await page.get_by_role("button", name="Confirm").click()
        await expect(page.locator(".outcome")).to_have_text("Thank you: your answer was sent.")
        assert page.url == url  # the form posted to the link itself
    finally:
        await ctx.close()
    assert bad == []
    body = (await daemon.result("s1", rid)).json()
    assert (body["answers"], body["answeredBy"], body["via"]) == ({"Deploy?": "No"}, "alice", "link")
