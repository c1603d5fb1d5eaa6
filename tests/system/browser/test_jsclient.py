"""The JavaScript client in Chromium: the README's 30-line inbox, loading
the build askd serves at /static/vendor/askd-client/, answers a question
over the browser's own WebSocket."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from playwright.async_api import expect

from tests.system.browser.conftest import WAIT_MS
from askd.tokens import issue_open_code
from tests.conftest import SECRET, RunningDaemon

README = Path(__file__).resolve().parents[3] / "clients" / "js" / "README.md"


def readme_example() -> str:
    """The README's ```html block, as a reader would copy it."""
    match = re.search(r"```html\n(.*?)```", README.read_text(), re.S)
    assert match, "the README has no html example"
    return match.group(1)


async def test_the_readme_inbox_answers_with_the_served_build(daemon: RunningDaemon[Any], browser: Any) -> None:
    # A document askd serves from /static/vendor/ (a 404 will do), so that the
    # example's ./askd-client/index.js is askd's copy of the build and its
    # socket is same-origin; the example's inline script needs the CSP bypassed.
    context = await browser.new_context(bypass_csp=True)
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        # Opened with `askd open`'s one-time code, as the README says.
        code = issue_open_code(SECRET, "alice", 600)
        await page.goto(f"{daemon.url}/static/vendor/#code={code}")
        await page.set_content(f"<!doctype html><title>Loading</title>\n{readme_example()}")
        await expect(page).to_have_title("Inbox", timeout=WAIT_MS)  # the example's title for "connected"
        assert "code=" not in page.url  # redeemLocationCode took it out of the address bar
        spent = await daemon.http.post(f"{daemon.url}/v1/open", json={"code": code})
        assert spent.status_code == 401  # and redeemed it: the code is used

        asked = await daemon.ask(
            "js-page", "alice", [{"question": "Which database?", "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}]
        )
        item = page.locator("#inbox li")
        await expect(item).to_have_count(1, timeout=WAIT_MS)
        await item.get_by_role("button", name="SQLite").click()
        await expect(item).to_have_count(0, timeout=WAIT_MS)  # closed: askd's ask_user_questions_cancelled

        result = (await daemon.result("js-page", asked["requestId"])).json()
        assert result["status"] == "answered"
        assert result["answers"] == {"Which database?": "SQLite"}
        assert errors == []
    finally:
        await context.close()


async def test_an_inbox_that_pauses_while_offline_comes_back_online(daemon: RunningDaemon[Any], browser: Any) -> None:
    context = await browser.new_context(bypass_csp=True)
    try:
        page = await context.new_page()
        await page.goto(f"{daemon.url}/static/vendor/")
        token = daemon.token("user", "alice")
        await page.set_content(
            f"""<!doctype html><title>states</title><script type="module">
            import {{ Inbox }} from './askd-client/index.js';
            const inbox = new Inbox({{ url: location.origin, token: {token!r}, pauseWhileOffline: true, backoff: {{ base: 50, cap: 100 }} }});
            inbox.on('state', (s) => document.title = s.state);
            inbox.start();
            </script>"""
        )
        await expect(page).to_have_title("connected", timeout=WAIT_MS)
        await context.set_offline(True)
        await expect(page).to_have_title("paused", timeout=WAIT_MS)
        # Paused: the inbox closed its socket (askd no longer lists it).
        deadline = asyncio.get_running_loop().time() + WAIT_MS / 1000
        while (await daemon.admin("GET", "/admin/v1/connections?userId=alice")).json()["connections"]:
            assert asyncio.get_running_loop().time() < deadline, "the paused inbox still holds a connection"
            await asyncio.sleep(0.02)
        await context.set_offline(False)
        await expect(page).to_have_title("connected", timeout=WAIT_MS)
    finally:
        await context.close()
