"""The page as an installable web app (protocol section 23), in Chromium
against a real daemon: its manifest as Chromium reads it (no errors, icons
that load, installable), correct under nginx's ``/askd/`` prefix; the
service worker installed and controlling the page, its scope the page's
folder; offline, the shell with the questions last seen, read-only, and
"Offline, reconnecting"; online again, the page reconnects and answers. The
cache holds the shell only: no token, no answer link, no API reply. The
screenshots at 390×844 are kept (tmp_path, and ASKD_KEEP_SHOTS=DIR copies
them there) and were looked at."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import expect

import askd
from askd.server.http import web
from tests.system.browser.conftest import WAIT_MS, OpenInbox, Tab
from tests.system.browser.test_phone_layout import PHONE, keep
from tests.conftest import RunningDaemon, eventually, q
from tests.system.front_door.conftest import nginx  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

# What the service worker keeps, read in the page: every cache's name and,
# for each entry, its address and body.
CACHED = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    out[name] = await Promise.all((await cache.keys()).map(async (r) => [r.url, await (await cache.match(r)).text()]));
  }
  return out;
}"""


async def controlled(tab: Tab) -> dict[str, Any]:
    """Wait until the service worker controls the page; its registration's scope and script."""
    return await tab.page.evaluate(
        """async () => {
            const reg = await navigator.serviceWorker.ready;
            if (!navigator.serviceWorker.controller) {
              await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
            }
            return { scope: reg.scope, script: navigator.serviceWorker.controller.scriptURL };
        }"""
    )


async def manifest_of(tab: Tab) -> dict[str, Any]:
    """The manifest as Chromium parsed it, its errors, and what keeps the page from being installed."""
    cdp = await tab.page.context.new_cdp_session(tab.page)
    got = await cdp.send("Page.getAppManifest")
    installability = await cdp.send("Page.getInstallabilityErrors")
    return {**got, "installability": installability["installabilityErrors"]}


async def check_manifest(tab: Tab, base: str) -> None:
    got = await manifest_of(tab)
    assert got["url"] == f"{base}/static/manifest.webmanifest"
    assert got["errors"] == [], got["errors"]
    assert got["parsed"]["scope"] == f"{base}/"  # Chromium's reading of the scope: the page's folder, under any prefix
    # Playwright's contexts are incognito, the one reason Chromium may give here.
    assert [e for e in got["installability"] if e["errorId"] != "in-incognito"] == [], got["installability"]
    # The fields a browser wants; start_url and id resolve to the page's folder too.
    manifest = await tab.page.evaluate(
        """async (url) => {
            const m = await (await fetch(url)).json();
            return { ...m, start_url: new URL(m.start_url, url).href, id: new URL(m.id, url).href };
        }""",
        got["url"],
    )
    assert (manifest["start_url"], manifest["id"], manifest["display"]) == (f"{base}/", f"{base}/", "standalone")
    assert manifest["name"] and manifest["short_name"] and manifest["theme_color"] and manifest["background_color"]
    # Every icon loads, at its stated size, from under the prefix.
    sizes = await tab.page.evaluate(
        """async (url) => {
            const m = await (await fetch(url)).json();
            return Promise.all(m.icons.map(async (icon) => {
              const src = new URL(icon.src, url).href;
              const img = new Image();
              img.src = src;
              await img.decode();
              return [src, icon.sizes, icon.purpose, `${img.naturalWidth}x${img.naturalHeight}`];
            }));
        }""",
        got["url"],
    )
    assert {p for _, _, p, _ in sizes} == {"any", "maskable"}
    for src, stated, _, natural in sizes:
        assert src.startswith(f"{base}/static/")
        assert stated in ("any", natural), (src, stated, natural)


async def test_the_manifest_is_valid_and_the_worker_controls_the_page_at_its_folder(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    await check_manifest(tab, daemon.url)
    registration = await controlled(tab)
    assert registration == {"scope": f"{daemon.url}/", "script": f"{daemon.url}/sw.js"}
    headers = (await daemon.http.get(f"{daemon.url}/")).headers["content-security-policy"]
    assert "manifest-src 'self'" in headers and "worker-src 'self'" in headers


@pytest.mark.parametrize("settings_overrides", [{"trusted_proxies": ["127.0.0.1"]}])
async def test_under_a_prefix_the_manifest_and_the_worker_stay_in_it(daemon: RunningDaemon, nginx: Any, inbox: OpenInbox) -> None:
    proxy = await nginx()
    tab = await inbox("alice", base=proxy.url)
    await check_manifest(tab, proxy.url)
    assert await controlled(tab) == {"scope": f"{proxy.url}/", "script": f"{proxy.url}/sw.js"}
    cached = await tab.page.evaluate(CACHED)
    (urls,) = [[u for u, _ in entries] for entries in cached.values()]
    assert f"{proxy.url}/" in urls and f"{proxy.url}/static/app.js" in urls
    assert [u for u in urls if not u.startswith(f"{proxy.url}/")] == []


async def test_offline_the_shell_shows_the_last_questions_read_only_then_reconnects_and_answers(
    daemon: RunningDaemon, inbox: OpenInbox, browser: Any
) -> None:
    ctx = await browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    tab = await inbox("alice", context=ctx, query="retry=50")
    token = await tab.page.evaluate("() => localStorage.getItem('askd.token')")
    first = (await daemon.ask("s1", "alice", [q("Deploy api 1.42 to production?", "yes", "no", header="Deploy")]))["requestId"]
    action = {"name": "drop_table", "summary": "Drop the table **orders_archive**.", "arguments": {"table": "orders_archive"}}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s2/questions", json={"to": ["alice"], "action": action}, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    second = r.json()["requestId"]
    await expect(tab.panel(first)).to_be_visible()
    await expect(tab.panel(second)).to_be_visible()
    await controlled(tab)

    await ctx.set_offline(True)
    await tab.page.reload()
    offline = tab.page.locator("#offline")
    await expect(offline).to_be_visible(timeout=WAIT_MS)
    await expect(tab.page.locator("#conn-text")).to_have_text("Offline, reconnecting")
    items = offline.locator(".offline-item")
    await expect(items).to_have_count(2)
    await expect(offline.locator(f'[data-request-id="{first}"]')).to_contain_text("Deploy api 1.42 to production?")
    await expect(offline.locator(f'[data-request-id="{second}"]')).to_contain_text("Drop the table orders_archive.")
    await expect(offline.locator(f'[data-request-id="{second}"] .chip')).to_have_text("Approval")
    # Nothing can be answered: no panel, no field, no button but the pill's own.
    await expect(tab.page.locator("form.panel")).to_have_count(0)
    assert await offline.locator("input, textarea, button, select, a").count() == 0
    await expect(tab.page.locator("#empty")).to_be_hidden()
    await keep(tab, "installable-offline-phone")

    # The cache holds the shell: no token, no API reply, no link page.
    cached = await tab.page.evaluate(CACHED)
    assert list(cached) == [shell_cache_name()]
    assert shell_cache_name().startswith(f"askd-shell-{askd.__version__}-")
    for url, body in next(iter(cached.values())):
        assert url.startswith(f"{daemon.url}/") and "?" not in url
        assert "/v1/" not in url and "/a/" not in url and not url.endswith("/ws")
        assert token not in body and token not in url

    # Online again: the page reconnects, the live panels replace the note, and answering works.
    await ctx.set_offline(False)
    await tab.connected()
    await expect(offline).to_be_hidden()
    panel = tab.panel(first)
    await expect(panel).to_be_visible()
    waiting = asyncio.create_task(daemon.result("s1", first, wait=10))
    await panel.get_by_label("yes").check()
    await panel.get_by_role("button", name="Submit").click()
    await expect(tab.note(first)).to_contain_text("Answered.")
    assert (await asyncio.wait_for(waiting, 10)).json()["answers"] == {"Deploy api 1.42 to production?": "yes"}
    await keep(tab, "installable-online-again-phone")


async def test_an_upgrade_installs_a_new_cache_and_deletes_the_old(daemon: RunningDaemon, inbox: OpenInbox) -> None:
    tab = await inbox("alice")
    await controlled(tab)
    old = shell_cache_name()
    await eventually(lambda: tab.page.evaluate("() => caches.keys()"), what="the shell's cache")
    assert list(await tab.page.evaluate(CACHED)) == [old]

    # askd upgraded in place: the same daemon now serves another version's worker.
    version = askd.__version__
    askd.__version__ = "99.0.0"
    web.service_worker_script.cache_clear()
    try:
        new = shell_cache_name()
        assert new.startswith("askd-shell-99.0.0-") and new != old
        await tab.page.reload()  # the browser checks sw.js at each visit
        await tab.connected()

        async def only_the_new() -> bool:
            return list(await tab.page.evaluate(CACHED)) == [new]

        # Chromium checks a few seconds after the load, once the page is idle.
        await eventually(only_the_new, timeout=20, every=0.2, what="the new cache alone")
    finally:
        askd.__version__ = version
        web.service_worker_script.cache_clear()


def shell_cache_name() -> str:
    """The cache's name the served worker carries: askd's version, then a digest of the shell."""
    text = web.service_worker_script().decode()
    return "askd-shell-" + json.loads(text.split("const CACHE = CACHE_PREFIX + ")[1].split(";")[0])
