"""Headless Debian Chromium driving the inbox page of a real daemon.

Playwright's async API runs in the test's event loop, the same loop as the
in-process ``daemon`` fixture, so the page and the daemon talk over real
sockets without either blocking the other. A browser is never downloaded:
without /usr/bin/chromium these tests skip, except under ``CI=true`` where
that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import RunningDaemon

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Playwright's own wait for things that must happen (a reconnect is at most
# a few hundred ms of backoff, a refresh well under a second).
WAIT_MS = 5000


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not CHROMIUM.exists():
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium); browser tests need it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            await b.close()


@dataclass
class Tab:
    """One browser tab showing the inbox."""

    page: Any
    shots: Path
    problems: list[str] = field(default_factory=list)

    def panel(self, request_id: str) -> Any:
        return self.page.locator(f'form.panel[data-request-id="{request_id}"]')

    def note(self, request_id: str) -> Any:
        return self.page.locator(f'.note[data-request-id="{request_id}"]')

    @property
    def conn(self) -> Any:
        return self.page.locator("#conn")

    async def connected(self) -> None:
        from playwright.async_api import expect

        await expect(self.conn).to_have_attribute("data-state", "connected", timeout=WAIT_MS)

    async def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path

    async def record_conn_states(self) -> None:
        """Keep every data-state the indicator goes through in window.__states."""
        await self.page.evaluate(
            """() => {
                window.__states = [];
                new MutationObserver(() => window.__states.push(document.getElementById('conn').dataset.state))
                    .observe(document.getElementById('conn'), {attributes: true, attributeFilter: ['data-state']});
            }"""
        )

    async def conn_states(self) -> list[str]:
        return await self.page.evaluate("() => window.__states")


OpenInbox = Callable[..., Awaitable[Tab]]


@pytest.fixture
async def inbox(daemon: RunningDaemon, browser: Any, tmp_path: Path) -> AsyncIterator[OpenInbox]:
    """``await inbox("alice")`` opens a connected tab with a fresh user token.

    The token is put in the browser's storage before the page loads (the
    page takes none from its address). Keyword arguments: ``context`` (a
    tab in an existing browser context),
    ``query`` (extra query string, e.g. ``"session=s2"``), ``connected``
    (False to skip waiting for the connection), ``base`` (the page's base
    URL, e.g. through a proxy; default the daemon's). Every tab is checked
    at the end for uncaught page errors and CSP violations.
    """
    shots = tmp_path / "screenshots"
    shots.mkdir()
    tabs: list[Tab] = []

    async def open_tab(
        user: str | None = "alice",
        *,
        context: Any = None,
        query: str = "",
        connected: bool = True,
        token: str | None = None,
        base: str | None = None,
    ) -> Tab:
        if token is None and user is not None:
            token = daemon.token("user", user)
        root = f"{base or daemon.url}/"
        # The page reads no token from its address: the token goes where a
        # redeemed `#code=` or the token form leaves it, the origin's storage.
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(root))
        stored = {"origins": [{"origin": origin, "localStorage": [{"name": "askd.token", "value": token}]}]}
        ctx = context or await browser.new_context(
            viewport={"width": 1000, "height": 760}, storage_state=stored if token is not None else None
        )
        page = await ctx.new_page()
        tab = Tab(page, shots)
        page.on("pageerror", lambda err: tab.problems.append(f"page error: {err}"))
        page.on(
            "console",
            lambda msg: tab.problems.append(f"console: {msg.text}")
            if msg.type == "error" and "Content Security Policy" in msg.text
            else None,
        )
        page.on("dialog", lambda d: tab.problems.append(f"dialog: {d.message}"))
        if token is not None and context is not None:
            # An existing context: from a document of the origin that runs no page code.
            await page.goto(f"{root}static/favicon.svg")
            await page.evaluate("(t) => localStorage.setItem('askd.token', t)", token)
        await page.goto(root + (f"?{query}" if query else ""))
        tabs.append(tab)
        if connected:
            await tab.connected()
        return tab

    yield open_tab
    problems = [p for t in tabs for p in t.problems]
    for ctx in {id(t.page.context): t.page.context for t in tabs}.values():
        await ctx.close()
    assert not problems, problems
